package transcript

import "testing"

func TestParse(t *testing.T) {
	ar := Parse([]byte("about\n-- send --\n{\"a\":1}\n-- expect --\ntext x\n-- send --\nmore\n"))
	if string(ar.Comment) != "about\n" || len(ar.Files) != 3 || ar.Files[0].Name != "send" ||
		string(ar.Files[0].Data) != "{\"a\":1}\n" || ar.Files[2].Name != "send" || string(ar.Files[2].Data) != "more\n" {
		t.Fatalf("parsed %+v", ar)
	}
}

package uitree

import "testing"

// BenchmarkParse reads the official Android fixture (12 nodes, 5 KB).
func BenchmarkParse(b *testing.B) {
	data := fixture(b, "android-views.json")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolve resolves an exact automation id in the same tree.
func BenchmarkResolve(b *testing.B) {
	tree := mustParse(b, fixture(b, "android-views.json"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tree.Resolve(Selector{AutomationID: "save"}); err != nil {
			b.Fatal(err)
		}
	}
}

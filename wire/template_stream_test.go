package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// streamPayload is the payload a Stream's template makes of text[:cut] + head + middle +
// tail, checked against the JSON it stands for: DecodePayload and the standard library's
// gzip reader read exactly that, and it is compressed when EncodePayload's rule says so.
func streamPayload(t testing.TB, s *Stream, text []byte, cut int, head, middle, tail []byte) []byte {
	t.Helper()
	tpl, err := s.Template(cut, head, tail)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tpl.AppendPayload(nil, middle)
	if err != nil {
		t.Fatal(err)
	}
	want := appendPlain(nil, text[:cut], head, middle, tail)
	if bytes.Equal(raw, want) {
		return raw // sent as it is
	}
	got, _, err := inflatePayload(raw, 0) // the text need not be JSON here
	if err != nil {
		t.Fatalf("the payload does not inflate: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the payload holds %.200q…, want %.200q…", got, want)
	}
	if bytes.HasPrefix(raw, []byte(wrapperHead)) {
		if std := inflateStd(t, raw); !bytes.Equal(std, want) {
			t.Fatal("the standard library reads another text")
		}
	}
	return raw
}

func TestStreamTemplate(t *testing.T) {
	text := bigCatalog(300_000)
	var cuts []int
	for i := 16 << 10; i < len(text)-100; i += 16 << 10 {
		cuts = append(cuts, i+i%7)
	}
	s, err := NewStream(text, cuts)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := EncodePayload(text)
	if len(s.text) > len(plain)*11/10 {
		t.Errorf("the stream's base64 is %d bytes, a whole compression %d", len(s.text), len(plain))
	}
	for _, cut := range []int{cuts[0], cuts[1], cuts[len(cuts)/2], cuts[len(cuts)-1]} {
		for _, head := range [][]byte{nil, []byte(`,"x":1`), text[cut : cut+20_000]} {
			for _, middle := range [][]byte{stamp(cut), nil} {
				if raw := streamPayload(t, s, text, cut, head, middle, []byte("}")); len(raw) >= CompressionThreshold && !bytes.HasPrefix(raw, []byte(wrapperHead)) {
					t.Fatalf("%d bytes of a catalog sent as they are", len(raw))
				}
			}
			// A middle that does not compress: the payload goes as JSON.
			streamPayload(t, s, text, cut, head, randomText(cut*3), []byte("}"))
		}
	}
	// A short stream's template sends short payloads as they are.
	short, err := NewStream(text[:1000], []int{10, 500})
	if err != nil {
		t.Fatal(err)
	}
	if raw := streamPayload(t, short, text, 500, []byte("ab"), nil, []byte("c")); bytes.HasPrefix(raw, []byte(wrapperHead)) {
		t.Error("a short payload compressed")
	}
	for _, bad := range [][]int{{0}, {5, 5}, {1001}, {10, 3}} {
		if _, err := NewStream(text[:1000], bad); err == nil {
			t.Errorf("cuts %v taken", bad)
		}
	}
	if _, err := s.Template(cuts[0]+1, nil, nil); err == nil {
		t.Error("a template at an offset that is not a cut")
	}
}

// FuzzStreamTemplate holds a Stream's payloads against the text they stand for: whatever
// the text, the cuts, the head, middle and tail, the payload decodes (with this package's
// reader and the standard library's) to text[:cut] + head + middle + tail.
func FuzzStreamTemplate(f *testing.F) {
	// The text is unit repeated (large texts from small inputs: the fuzzer is slow on
	// large ones).
	f.Add(bigCatalog(2000), uint8(20), uint16(300), uint8(3), 20, []byte(`"2026-12-01T15:03:04Z"`), []byte("}"))
	f.Add(randomText(3000), uint8(16), uint16(9000), uint8(0), 0, []byte{}, []byte{})
	f.Add(bigCatalog(2000), uint8(0), uint16(7), uint8(1), 5, []byte("x"), []byte("]}"))
	f.Fuzz(func(t *testing.T, unit []byte, repeat uint8, step uint16, which uint8, headLen int, middle, tail []byte) {
		text := bytes.Repeat(unit, 1+int(repeat)%64)
		if len(text) == 0 || step == 0 {
			return
		}
		var cuts []int
		step = max(step, uint16(min(len(text)/64, 0xffff))) // a few dozen cuts: each is a flush
		for i := int(step); i <= len(text); i += int(step) {
			cuts = append(cuts, i)
		}
		if len(cuts) == 0 {
			return
		}
		s, err := NewStream(text, cuts)
		if err != nil {
			t.Fatal(err)
		}
		cut := cuts[int(which)%len(cuts)]
		headLen = min(max(headLen, 0), len(text)-cut)
		// The head is what follows the cut in text, as in a catalog's answers, when it fits.
		streamPayload(t, s, text, cut, text[cut:cut+headLen], middle, tail)
	})
}

// TestStreamGzipBytes holds a Stream's compressed bytes to a gzip.Writer's at the payloads'
// level, flushed at the same cuts: NewStream writes the header itself and deflates with the
// raw writers Template uses, and the bytes on the wire are what they were.
func TestStreamGzipBytes(t *testing.T) {
	var text []byte
	for i := range 3000 {
		text = fmt.Appendf(text, `{"id":"tool.%d","description":"tool %d of a catalog, %s"},`, i, i%97, strings.Repeat("x", i%41))
	}
	for _, cuts := range [][]int{{len(text)}, {1, 2, len(text) / 3, len(text) - 1, len(text)}, {16 << 10, 32 << 10, 48 << 10}} {
		s, err := NewStream(text, cuts)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		zw, err := gzip.NewWriterLevel(&want, compressionLevel)
		if err != nil {
			t.Fatal(err)
		}
		from := 0
		for i, cut := range cuts {
			if _, err := zw.Write(text[from:cut]); err != nil {
				t.Fatal(err)
			}
			if err := zw.Flush(); err != nil {
				t.Fatal(err)
			}
			if s.cuts[i].gz != want.Len() {
				t.Fatalf("cut %d at %d gzip bytes, want %d", i, s.cuts[i].gz, want.Len())
			}
			from = cut
		}
		if !bytes.Equal(s.gz, want.Bytes()) {
			t.Fatalf("cuts %v: the stream's gzip bytes differ from a gzip.Writer's", cuts)
		}
	}
}

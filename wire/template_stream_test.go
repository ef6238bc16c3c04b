package wire

import (
	"bytes"
	"fmt"
	"slices"
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

// FuzzStreamPieces holds a stream of pieces against the text it stands for and against
// the same stream made without reuse: whatever another stream holds and whatever the hints
// say (right, wrong, out of range), the compressed bytes are those of every piece
// deflated on its own, and its payloads decode to the text.
func FuzzStreamPieces(f *testing.F) {
	f.Add(bigCatalog(3000), uint8(20), uint16(700), uint16(100), uint8(5), []byte{1, 2, 3, 0xff, 4, 5}, uint8(2), uint16(300))
	f.Add(randomText(3000), uint8(3), uint16(900), uint16(0), uint8(0), []byte{0, 1, 2}, uint8(0), uint16(0))
	f.Add(bigCatalog(500), uint8(60), uint16(4000), uint16(9000), uint8(40), []byte{}, uint8(1), uint16(40000))
	f.Fuzz(func(t *testing.T, unit []byte, repeat uint8, step, at uint16, change uint8, hints []byte, which uint8, window uint16) {
		streamPiecesCase(t, unit, repeat, step, at, change, hints, which, window)
	})
}

// streamPiecesCase is one case of FuzzStreamPieces.
func streamPiecesCase(t testing.TB, unit []byte, repeat uint8, step, at uint16, change uint8, hints []byte, which uint8, window uint16) {
	{
		text := bytes.Repeat(unit, 1+int(repeat)%64)
		if len(text) == 0 || step == 0 {
			return
		}
		step = max(step, uint16(min(len(text)/64, 0xffff)))
		cutsOf := func(text []byte) []int {
			var cuts []int
			for i := int(step); i <= len(text); i += int(step) {
				cuts = append(cuts, i)
			}
			return cuts
		}
		windowsOf := func(cuts []int) []int {
			w := make([]int, len(cuts))
			for i := 1; i < len(cuts); i++ {
				w[i] = cuts[i-1] - min(int(window), cuts[i-1], maxMatchWindow)
			}
			return w
		}
		// prev is text with change bytes put in at at, the stretches after it shifted.
		a := int(at) % (len(text) + 1)
		old := slices.Concat(text[:a], bytes.Repeat([]byte{'x'}, int(change)), text[a:])
		prev, err := NewStreamPieces(old, cutsOf(old), windowsOf(cutsOf(old)), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		cuts := cutsOf(text)
		if len(cuts) == 0 {
			return
		}
		plain, err := NewStreamPieces(text, cuts, windowsOf(cuts), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		reuse := make([]int, len(cuts))
		for i := range reuse {
			reuse[i] = i // the same stretch of old, right before the change
			if len(hints) > 0 {
				reuse[i] = int(int8(hints[i%len(hints)])) // anything
			}
		}
		s, err := NewStreamPieces(text, cuts, windowsOf(cuts), prev, reuse)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s.gz, plain.gz) || !slices.Equal(s.cuts, plain.cuts) {
			t.Fatal("the stream's bytes differ from its pieces deflated anew")
		}
		if _, err := NewStreamPieces(text, cuts, nil, prev, reuse[1:]); err == nil {
			t.Fatal("hints of another length taken")
		}
		cut := cuts[int(which)%len(cuts)]
		streamPayload(t, s, text, cut, text[cut:min(len(text), cut+100)], []byte(`"x"`), []byte("}"))
	}
}

// TestStreamPieces: a stream of pieces reuses what another holds — the pieces named and
// found equal are its bytes — and costs a few per cent more than one stream (its windows start empty).
func TestStreamPieces(t *testing.T) {
	text := bigCatalog(300_000)
	var cuts []int
	for i := 16 << 10; i < len(text); i += 16 << 10 {
		cuts = append(cuts, i)
	}
	cuts = append(cuts, len(text))
	windows := make([]int, len(cuts))
	for i := 1; i < len(cuts); i++ {
		windows[i] = cuts[i-1] - 1000
	}
	s, err := NewStreamPieces(text, cuts, windows, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := NewStreamPieces(text, cuts, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	one, err := NewStream(text, cuts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.gz) > len(one.gz)*101/100 || len(empty.gz) < len(s.gz) {
		t.Errorf("pieces %d bytes (empty windows %d), one stream %d", len(s.gz), len(empty.gz), len(one.gz))
	}
	// Another text that ends as this one: its pieces from the second on are this one's.
	other := slices.Concat([]byte(`{"revision":"another"}`), text[len(`{"revision":"another"}`):])
	reuse := make([]int, len(cuts))
	for i := range reuse {
		reuse[i] = i
	}
	o, err := NewStreamPieces(other, cuts, windows, s, reuse)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(o.gz[:o.cuts[0].gz], s.gz[:s.cuts[0].gz]) {
		t.Error("the first piece, of another text, copied")
	}
	if !bytes.Equal(o.gz[o.cuts[0].gz:], s.gz[s.cuts[0].gz:]) {
		t.Error("the pieces both texts share are not the same bytes")
	}
	// Another window before the same piece: compressed anew.
	w2 := slices.Clone(windows)
	w2[2]--
	if o2, err := NewStreamPieces(other, cuts, w2, s, reuse); err != nil || bytes.Equal(o2.gz[o2.cuts[1].gz:o2.cuts[2].gz], s.gz[s.cuts[1].gz:s.cuts[2].gz]) {
		t.Errorf("a piece of another window copied (%v)", err)
	}
	for _, bad := range []int{cuts[1] + 1, cuts[1] - maxMatchWindow - 1} {
		w2[2] = bad
		if _, err := NewStreamPieces(other, cuts, w2, s, reuse); err == nil {
			t.Errorf("a window from %d taken before a piece at %d", bad, cuts[1])
		}
	}
	streamPayload(t, o, other, cuts[3], text[cuts[3]:cuts[3]+10], nil, []byte("}"))
	// A stream that is not of pieces is not reused.
	if w, err := NewStreamPieces(other, cuts, windows, one, reuse); err != nil || !bytes.Equal(w.gz, o.gz) {
		t.Errorf("reusing a stream that is not of pieces: %v", err)
	}
}

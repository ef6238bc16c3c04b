package wire

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// memoCatalog is a catalog answer's text for n tools, as a Set writes one: the head, the
// entries, the cuts (at entry ends, every cutEvery bytes) and the end of each entry.
func memoCatalog(n, cutEvery int) (text []byte, cuts, ends []int) {
	text = []byte(`{"schema":"ansight.tool-catalog.v3","revision":"sha256:0","tools":[`)
	last := 0
	for i := range n {
		if i > 0 {
			text = append(text, ',')
		}
		text = fmt.Appendf(text, `{"id":"app.tool_%04d","name":"Tool %d","description":"Does thing number %d, carefully.","category":"c%d","policy":"read",`+
			`"argumentsSchema":{"type":"object","properties":{"x%d":{"type":"integer"}},"additionalProperties":false},"resultSchema":{"type":"object"},`+
			`"prerequisiteToolIds":["app.tool_%04d"],"definitionRevision":"sha256:%x"}`, i, i, i, i%7, i, i/2, i*7919)
		ends = append(ends, len(text))
		if len(text)-last >= cutEvery {
			cuts = append(cuts, len(text))
			last = len(text)
		}
	}
	return text, cuts, ends
}

// memoAnswer is the payload for the first l tools of text, made from the stream as
// package catalog makes it.
func memoAnswer(t testing.TB, s *Stream, text []byte, cuts, ends []int, l int) []byte {
	t.Helper()
	end := ends[l-1]
	cut := 0
	for _, c := range cuts {
		if c <= end {
			cut = c
		}
	}
	rest := fmt.Appendf(bytes.Clone(text[cut:end]), `],"count":%d,"detail":"definitions"`, l)
	if cut == 0 {
		raw, err := EncodePayload(append(append(bytes.Clone(text[:end]), rest[len(text[cut:end]):]...), '}'))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	tpl, err := s.Template(cut, rest, []byte("}"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tpl.AppendPayload(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// checkMemo decodes raw with the memo prev and compares with UnmarshalPayload.
func checkMemo(t testing.TB, raw []byte, prev *CatalogMemo) *CatalogMemo {
	t.Helper()
	var want Catalog
	wp, werr := UnmarshalPayload(raw, 0, &want)
	gp, got, memo, gerr := UnmarshalCatalogPayload(raw, 0, prev)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("UnmarshalCatalogPayload: %v; UnmarshalPayload: %v", gerr, werr)
	}
	if werr != nil {
		if gerr.Error() != werr.Error() {
			t.Fatalf("UnmarshalCatalogPayload: %v; UnmarshalPayload: %v", gerr, werr)
		}
		return prev
	}
	if !bytes.Equal(gp, wp) {
		t.Fatalf("payload %.100q…, want %.100q…", gp, wp)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("catalog differs from UnmarshalPayload's (%d tools, want %d)", len(got.Tools), len(want.Tools))
	}
	return memo
}

// Answers for other limits resume inflating where the compressed bytes part and decode
// only the entries that differ; the entries both hold are the earlier answer's values.
func TestCatalogMemo(t *testing.T) {
	text, cuts, ends := memoCatalog(1000, 16<<10)
	s, err := NewStream(text, cuts)
	if err != nil {
		t.Fatal(err)
	}
	var memo *CatalogMemo
	for i, l := range []int{1000, 999, 990, 1000, 500, 17, 1, 3, 998} {
		raw := memoAnswer(t, s, text, cuts, ends, l)
		next := checkMemo(t, raw, memo)
		if len(next.cat.Tools) != l {
			t.Fatalf("limit %d: %d tools", l, len(next.cat.Tools))
		}
		if i > 0 && l > 3 {
			if wrapped := bytes.HasPrefix(raw, []byte(wrapperHead)); wrapped && (next.gz == nil || len(next.gz.points) == 0) {
				t.Fatalf("limit %d: no block ends kept", l)
			}
			shared := 0
			for j := range min(l, len(memo.cat.Tools)) {
				if unsafe.StringData(next.cat.Tools[j].ID) == unsafe.StringData(memo.cat.Tools[j].ID) {
					shared++
				}
			}
			if shared < min(l, len(memo.cat.Tools))-1 {
				t.Errorf("limit %d after %d: %d entries reused", l, len(memo.cat.Tools), shared)
			}
		}
		memo = next
	}
	// A memo from a plain payload, and a plain payload after a memo.
	small := memoAnswer(t, s, text, cuts, ends, 3)
	m := checkMemo(t, small, nil)
	checkMemo(t, memoAnswer(t, s, text, cuts, ends, 1000), m)
	checkMemo(t, small, memo)
}

// Payloads that differ from the kept one where it matters are refused or read as the
// plain path reads them: a duplicate or case-variant name in a later entry, a flipped
// byte, a changed trailer, a second gzip member.
func TestCatalogMemoRefusals(t *testing.T) {
	text, cuts, ends := memoCatalog(400, 8<<10)
	s, err := NewStream(text, cuts)
	if err != nil {
		t.Fatal(err)
	}
	first := memoAnswer(t, s, text, cuts, ends, 400)
	memo := checkMemo(t, first, nil)
	for name, edit := range map[string]func([]byte) []byte{
		"duplicate name": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"name":"Tool 399"`), []byte(`"name":"Tool 399","name":"x"`), 1)
		},
		"case variant": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"name":"Tool 399"`), []byte(`"Name":"Tool 399"`), 1)
		},
		"top duplicate": func(b []byte) []byte { return bytes.Replace(b, []byte(`"count":`), []byte(`"schema":"x","count":`), 1) },
		"bad utf-8":     func(b []byte) []byte { return bytes.Replace(b, []byte(`"Tool 399"`), []byte("\"Tool \xff\""), 1) },
	} {
		t.Run(name, func(t *testing.T) {
			json, err := DecodePayload(first, 0)
			if err != nil {
				t.Fatal(err)
			}
			edited := edit(bytes.Clone(json))
			if bytes.Equal(edited, json) {
				t.Fatal("no edit")
			}
			at := commonPrefix(edited, json)
			cut := 0
			for _, c := range cuts {
				if c <= at {
					cut = c
				}
			}
			tpl, err := s.Template(cut, edited[cut:len(edited)-1], []byte("}"))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := tpl.AppendPayload(nil, nil)
			if _, _, _, err := UnmarshalCatalogPayload(raw, 0, memo); err == nil {
				t.Fatal("taken")
			}
			checkMemo(t, raw, memo)
		})
	}
	w, _ := readWrapper(first)
	gz, _ := base64.StdEncoding.AppendDecode(nil, w.data)
	for name, gz := range map[string][]byte{
		"crc":           append(bytes.Clone(gz[:len(gz)-8]), 1, 2, 3, 4, gz[len(gz)-4], gz[len(gz)-3], gz[len(gz)-2], gz[len(gz)-1]),
		"size":          append(bytes.Clone(gz[:len(gz)-1]), gz[len(gz)-1]+1),
		"second member": append(bytes.Clone(gz), gz...),
		"garbage after": append(bytes.Clone(gz), 0),
		"header name":   append([]byte{0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0xff, 'n', 0}, gz[10:]...),
	} {
		t.Run(name, func(t *testing.T) {
			raw := wrap(int64(len(text)), gz)
			checkMemo(t, raw, memo)
			if _, _, m, err := UnmarshalCatalogPayload(raw, 0, memo); err == nil && m.gz != nil {
				t.Fatal("the resumed path took it")
			}
		})
	}
}

// FuzzCatalogMemo holds UnmarshalCatalogPayload against UnmarshalPayload: a payload for
// any limit after a memo of any other, with any byte of its JSON or of its wrapper
// changed, decodes to the same catalog or fails with the same error.
func FuzzCatalogMemo(f *testing.F) {
	text, cuts, ends := memoCatalog(300, 6<<10)
	s, err := NewStream(text, cuts)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(300), uint16(299), false, 0, byte(0))
	f.Add(uint16(300), uint16(250), false, -40, byte(1))
	f.Add(uint16(120), uint16(300), true, 9000, byte('"'^'x'))
	f.Add(uint16(1), uint16(2), false, 100, byte(0x20))
	f.Fuzz(func(t *testing.T, l1, l2 uint16, inJSON bool, at int, flip byte) {
		l1, l2 = 1+l1%300, 1+l2%300
		memo := checkMemo(t, memoAnswer(t, s, text, cuts, ends, int(l1)), nil)
		raw := memoAnswer(t, s, text, cuts, ends, int(l2))
		if inJSON { // the edit in the JSON, compressed the plain way
			json, err := DecodePayload(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			if at < 0 {
				at += len(json)
			}
			if at >= 0 && at < len(json) {
				json[at] ^= flip
			}
			if raw, err = EncodePayload(json); err != nil {
				t.Fatal(err)
			}
		} else { // the edit in the wrapper (its base64 text, mostly)
			if at < 0 {
				at += len(raw) - 2
			} else {
				at %= len(raw)
			}
			if at >= 0 && at < len(raw) {
				raw[at] ^= flip
			}
		}
		checkMemo(t, raw, memo)
	})
}

// changedAnswer is the payload of a catalog changed from memoCatalog's first l tools: another
// revision in the head, entry drop left out (none when out of range), an entry of other
// bytes inserted before entry ins (none when out of range), and the JSON's byte at ^= flip.
func changedAnswer(t testing.TB, text []byte, ends []int, l, drop, ins, at int, flip byte) []byte {
	t.Helper()
	raw, err := EncodePayload(changedJSON(text, ends, l, drop, ins, at, flip))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// changedJSON is changedAnswer's JSON.
func changedJSON(text []byte, ends []int, l, drop, ins, at int, flip byte) []byte {
	head := bytes.Replace(text[:ends[0]-len(entryOf(text, ends, 0))], []byte(`"sha256:0"`), []byte(`"sha256:1"`), 1)
	var entries [][]byte
	for i := range l {
		if i == ins {
			entries = append(entries, []byte(`{"id":"app.tool_new","name":"New","description":"A new tool.","category":"c","policy":"critical","argumentsSchema":{"type":"object"},"resultSchema":{}}`))
		}
		if i != drop {
			entries = append(entries, entryOf(text, ends, i))
		}
	}
	json := slices.Concat(head, bytes.Join(entries, []byte(",")), fmt.Appendf(nil, `],"count":%d,"detail":"definitions"}`, len(entries)))
	if at < 0 {
		at += len(json)
	}
	if at >= 0 && at < len(json) {
		json[at] ^= flip
	}
	return json
}

// entryOf is memoCatalog's entry i.
func entryOf(text []byte, ends []int, i int) []byte {
	start := bytes.IndexByte(text, '[') + 1
	if i > 0 {
		start = ends[i-1] + 1
	}
	return text[start:ends[i]]
}

// After a change — another revision in the head, an entry gone, one new — the entries that
// are the same bytes as the kept answer's are its values, wherever they now stand, and the
// catalog is UnmarshalPayload's; an edit in a reused entry's place is read as it is.
func TestCatalogMemoChanged(t *testing.T) {
	text, cuts, ends := memoCatalog(1000, 16<<10)
	s, err := NewStream(text, cuts)
	if err != nil {
		t.Fatal(err)
	}
	memo := checkMemo(t, memoAnswer(t, s, text, cuts, ends, 1000), nil)
	next := checkMemo(t, changedAnswer(t, text, ends, 1000, 3, 10, 0, 0), memo)
	shared := 0
	for _, e := range next.cat.Tools {
		for _, p := range memo.cat.Tools[:20] {
			if unsafe.StringData(e.ID) == unsafe.StringData(p.ID) {
				shared++
			}
		}
	}
	if len(next.cat.Tools) != 1000 || shared < 18 {
		t.Fatalf("%d tools, %d of the first 20 reused", len(next.cat.Tools), shared)
	}
	// The second change after the first, and edits where entries are reused.
	checkMemo(t, changedAnswer(t, text, ends, 999, -1, 500, 0, 0), next)
	for _, edit := range []struct {
		at   int
		flip byte
	}{{ends[5] - 3, 'x' ^ '}'}, {ends[5], ',' ^ ' '}, {ends[7] + 2, 'i' ^ 'I'}, {ends[7] - 1, '}' ^ ']'}} {
		checkMemo(t, changedAnswer(t, text, ends, 1000, 3, 10, edit.at, edit.flip), memo)
	}
}

// FuzzCatalogMemoChanged holds UnmarshalCatalogPayload against UnmarshalPayload after a
// change: any limit, an entry gone, one new, any byte of the JSON changed, after a memo of
// any limit.
func FuzzCatalogMemoChanged(f *testing.F) {
	text, cuts, ends := memoCatalog(300, 6<<10)
	s, err := NewStream(text, cuts)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(300), uint16(300), 3, 10, 0, byte(0))
	f.Add(uint16(300), uint16(200), -1, 0, 400, byte('"'^'x'))
	f.Add(uint16(20), uint16(300), 19, 299, -30, byte(' '))
	f.Fuzz(func(t *testing.T, l1, l2 uint16, drop, ins, at int, flip byte) {
		l1, l2 = 1+l1%300, 1+l2%300
		memo := checkMemo(t, memoAnswer(t, s, text, cuts, ends, int(l1)), nil)
		checkMemo(t, changedAnswer(t, text, ends, int(l2), drop, ins, at, flip), memo)
	})
}

// piecesAnswer is the payload of json (memoCatalog's text, changed) as a catalog Set
// writes it after a change: a stream of pieces cut at the ends of the entries whose
// number ends in 7, each piece's window the 2,000 bytes before it, copying from prev (the
// stream of prevJSON made so) the pieces whose text and window are the same, then the end
// compressed after the last cut.
func piecesAnswer(t testing.TB, json []byte, prev *Stream, prevJSON []byte) ([]byte, *Stream) {
	t.Helper()
	end := bytes.LastIndex(json, []byte(`],"count"`))
	if end < 0 {
		t.Fatal("not a catalog")
	}
	cutsOf := func(text []byte) (cuts, windows []int) {
		for i := 0; ; {
			j := bytes.Index(text[i:], []byte(`7","name"`))
			if j < 0 {
				break
			}
			k := bytes.Index(text[i+j:], []byte(`"}`))
			if k < 0 {
				break
			}
			cut := i + j + k + 2
			if cut > end {
				break
			}
			windows = append(windows, max(0, cut-2000))
			cuts = append(cuts, cut)
			i = cut
		}
		return cuts, append([]int{0}, windows[:max(0, len(windows)-1)]...)
	}
	cuts, windows := cutsOf(json)
	if len(cuts) == 0 {
		raw, err := EncodePayload(json)
		if err != nil {
			t.Fatal(err)
		}
		return raw, nil
	}
	var reuse []int
	if prev != nil {
		pc, pw := cutsOf(prevJSON)
		reuse = make([]int, len(cuts))
		for i := range cuts {
			reuse[i] = -1
			for k := 1; k < len(pc) && i > 0; k++ {
				if bytes.Equal(json[windows[i]:cuts[i]], prevJSON[pw[k]:pc[k]]) && cuts[i-1]-windows[i] == pc[k-1]-pw[k] {
					reuse[i] = k
				}
			}
		}
	}
	s, err := NewStreamPieces(json, cuts, windows, prev, reuse)
	if err != nil {
		t.Fatal(err)
	}
	last := cuts[len(cuts)-1]
	tpl, err := s.Template(last, json[last:len(json)-1], json[len(json)-1:])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tpl.AppendPayload(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw, s
}

// After a change, a payload whose compressed stretches are the kept one's (an app that
// copies them, NewStreamPieces) is inflated only where it differs: the rest is copied from
// the kept JSON, and the catalog is UnmarshalPayload's.
func TestCatalogMemoStretches(t *testing.T) {
	text, _, ends := memoCatalog(1000, 16<<10)
	plain := fmt.Appendf(bytes.Clone(text), `],"count":%d,"detail":"definitions"}`, len(ends))
	raw, s := piecesAnswer(t, plain, nil, nil)
	memo := checkMemo(t, raw, nil)
	// Each change has another revision.
	for _, change := range []struct{ drop, ins, at int }{{-1, -1, 0}, {3, -1, 0}, {-1, 500, 0}, {700, 10, 0}, {3, 10, -200}} {
		json := changedAnswer(t, text, ends, 1000, change.drop, change.ins, 0, 0)
		next, err := DecodePayload(json, 0)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := piecesAnswer(t, next, s, plain)
		m := checkMemo(t, raw, memo)
		t.Logf("change %+v: %d of %d bytes copied", change, m.gz.copiedOrZero(), len(next))
		if m.gz == nil || m.gz.copied < len(next)*2/3 {
			t.Errorf("change %+v: %d of %d bytes copied", change, m.gz.copiedOrZero(), len(next))
		}
	}
}

func (m *gzipMemo) copiedOrZero() int {
	if m == nil {
		return 0
	}
	return m.copied
}

// FuzzCatalogMemoStretches holds UnmarshalCatalogPayload against UnmarshalPayload for a
// payload whose stretches are copied from the kept one's: any change of the catalog (an
// entry gone, one new, a byte of the JSON), and any byte of the wrapper changed after.
func FuzzCatalogMemoStretches(f *testing.F) {
	c := newStretchesCase(f)
	f.Add(uint16(300), 3, 10, 0, byte(0), -1, byte(0))
	f.Add(uint16(250), -1, 100, 400, byte('"'^'x'), 5000, byte(1))
	f.Add(uint16(300), 200, -1, -30, byte(' '), -10, byte(0x40))
	f.Fuzz(func(t *testing.T, l uint16, drop, ins, at int, flip byte, wat int, wflip byte) {
		c.check(t, l, drop, ins, at, flip, wat, wflip)
	})
}

// stretchesCase is FuzzCatalogMemoStretches's kept answer: memoCatalog's 300 tools as a
// stream of pieces, and its memo.
type stretchesCase struct {
	text, base []byte
	ends       []int
	s          *Stream
	memo       *CatalogMemo
}

func newStretchesCase(t testing.TB) *stretchesCase {
	text, _, ends := memoCatalog(300, 6<<10)
	base := fmt.Appendf(bytes.Clone(text), `],"count":%d,"detail":"definitions"}`, len(ends))
	raw, s := piecesAnswer(t, base, nil, nil)
	return &stretchesCase{text: text, base: base, ends: ends, s: s, memo: checkMemo(t, raw, nil)}
}

// check decodes, after the kept answer, the catalog changed as changedJSON says (the
// first l tools) and written as a stream copying the kept one's pieces, then its wrapper's
// byte wat flipped by wflip.
func (c *stretchesCase) check(t testing.TB, l uint16, drop, ins, at int, flip byte, wat int, wflip byte) {
	json := changedJSON(c.text, c.ends, 1+int(l)%300, drop, ins, at, flip)
	if !bytes.Contains(json, []byte(`],"count"`)) {
		return
	}
	raw, _ := piecesAnswer(t, json, c.s, c.base)
	if wat < 0 {
		wat += len(raw) - 2
	}
	if wat >= 0 && wat < len(raw) {
		raw[wat] ^= wflip
	}
	checkMemo(t, raw, c.memo)
}

// The fuzz targets' cases for many random inputs, in every run (the fuzzing engine is
// not run by go test, and where it is, on this project's machines, it gets little past
// the seed corpus).
func TestRandomCatalogMemoStretches(t *testing.T) {
	c := newStretchesCase(t)
	r := rand.New(rand.NewPCG(29, 2))
	n := 400
	if raceEnabled {
		n = 40
	}
	for range n {
		wat := -1 << 30 // no edit of the wrapper, mostly
		if r.IntN(3) == 0 {
			wat = r.IntN(40000) - 100
		}
		c.check(t, uint16(r.IntN(300)), r.IntN(320)-10, r.IntN(320)-10, r.IntN(200000)-1000, byte(r.IntN(256)), wat, byte(1+r.IntN(255)))
	}
}

func TestRandomStreamPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	n := 300
	if raceEnabled {
		n = 30
	}
	for range n {
		unit := bigCatalog(r.IntN(4000))
		if r.IntN(3) == 0 {
			unit = randomText(r.IntN(3000))
		}
		hints := make([]byte, r.IntN(8))
		for j := range hints {
			hints[j] = byte(r.IntN(256))
		}
		streamPiecesCase(t, unit, uint8(r.IntN(256)), uint16(r.IntN(65536)), uint16(r.IntN(65536)), uint8(r.IntN(256)), hints, uint8(r.IntN(256)), uint16(r.IntN(65536)))
	}
}

package jsonscan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// quickSeeds are values QuickValue takes and values it gives up on: schemas as a catalog
// holds them, every kind of value, escapes and bytes above 0x7f in names and strings,
// duplicates (exact, escaped, case variants, which Value takes), objects at and above
// quickNames members, depth limits, malformed values.
var quickSeeds = func() []string {
	seeds := []string{
		`{"type":"object","properties":{"value":{"type":"string","maxLength":100,"description":"Echoed back."}}}`,
		`{"type":"object","properties":{"tool":{"type":"string"},"value":{"type":"string"}},"required":["tool","value"]}`,
		` { "a" : [ 1 , -0.5e+10 , "x" , true , false , null , { } , [ ] ] } `,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":1,"A":2}`, `{"é":1,"é":2}`, `{"a":{"b":1},"b":{"a":1,"a":1}}`,
		`{"a":"\u00e9\ud83d\ude00\n","b":"é","c":"\ud800"}`, `{"a":"x` + "\x01" + `"}`, "{\"a\":\"\xff\"}",
		`[[[[1]]]]`, `[[[[[1]]]]]`, `{"a":{"a":{"a":{"a":{}}}}}`, `{"a":[{"a":[{}]}]}`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":tru}`, `{"a":nul`, `{"a"1}`, `{"a":1,}`, `{,}`, `[1,]`, `[1 2]`, `{"a":1` + "\x00" + `}`,
		`"x"`, `"x\"y"`, `12`, `-0.5e-3`, `true`, `null`, ``, ` `, `}`, `{"a"`, `{"a":`, `["a`,
	}
	for _, n := range []int{quickNames - 1, quickNames, quickNames + 1} {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"p%d":{"type":"string"},`, i)
		}
		seeds = append(seeds, strings.TrimSuffix(b.String(), ",")+"}", b.String()+`"p0":1}`)
	}
	return seeds
}()

// checkQuick holds QuickValue against Value, at the top and as the value of an object
// member (whose name, read before, must still count as a duplicate after QuickValue):
// where QuickValue takes a value, Value takes the same bytes and the scanner goes on
// alike; where it gives up, the scanner is where it was, and Value's reading (its error
// too) is what a scanner that never tried QuickValue reads.
func checkQuick(t *testing.T, data []byte, maxDepth int) {
	t.Helper()
	for _, wrap := range [][2]string{{"", ""}, {`{"k":`, `,"k":0}`}, {`{"k":`, `}`}, {`[`, `]`}} {
		in := []byte(wrap[0] + string(data) + wrap[1])
		var q, v Scanner
		q.Reset(in, maxDepth)
		v.Reset(in, maxDepth)
		prefix := func(s *Scanner) error {
			switch wrap[0] {
			case `{"k":`:
				if err := s.EnterObject(); err != nil {
					return err
				}
				_, _, err := s.Member(0)
				return err
			case `[`:
				if err := s.EnterArray(); err != nil {
					return err
				}
				_, err := s.Element(0)
				return err
			}
			return nil
		}
		if err := prefix(&q); err != nil {
			continue // maxDepth 0
		}
		prefix(&v)
		q.Peek()
		mark := q.Mark()
		got, ok := q.QuickValue()
		want, werr := v.Value()
		if ok {
			if werr != nil || !bytes.Equal(got, want) || q.Pos() != v.Pos() || q.Depth() != v.Depth() {
				t.Fatalf("%q: QuickValue %q (at %d), Value %q, %v (at %d)", in, got, q.Pos(), want, werr, v.Pos())
			}
		} else {
			if m := q.Mark(); m != mark {
				t.Fatalf("%q: QuickValue gave up but moved the scanner: %+v, was %+v", in, m, mark)
			}
			got, err := q.Value()
			if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("%q: Value after QuickValue %q, %v; without %q, %v", in, got, err, want, werr)
			}
		}
		if werr != nil {
			continue
		}
		// The rest of the input reads the same: the member after (a duplicate of the one
		// before the value, or the end of the object), the end of the array, the end.
		rest := func(s *Scanner) string {
			var r string
			switch wrap[0] {
			case `{"k":`:
				name, more, err := s.Member(1)
				r = fmt.Sprint(string(name), more, err)
			case `[`:
				more, err := s.Element(1)
				r = fmt.Sprint(more, err)
			}
			return r + fmt.Sprint(s.End())
		}
		if qr, vr := rest(&q), rest(&v); qr != vr {
			t.Fatalf("%q: after QuickValue %s, after Value %s", in, qr, vr)
		}
	}
}

// FuzzQuickValue holds QuickValue against Value (checkQuick), at a generous and a small
// depth limit.
func FuzzQuickValue(f *testing.F) {
	for _, s := range quickSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkQuick(t, data, 10000)
		checkQuick(t, data, 4)
	})
}

// TestRandomQuickValue runs FuzzQuickValue's check over random edits of its seeds in
// every test run: a byte changed, inserted or removed, or a piece of another seed
// spliced in.
func TestRandomQuickValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 9))
	alphabet := []byte(`{}[]:,"\ u0aAé` + "\x00\x1f\x7f\xff" + `-1.e+tfn`)
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		b := []byte(quickSeeds[rng.IntN(len(quickSeeds))])
		for range 1 + rng.IntN(3) {
			i := 0
			if len(b) > 0 {
				i = rng.IntN(len(b) + 1)
			}
			switch c := alphabet[rng.IntN(len(alphabet))]; rng.IntN(4) {
			case 0:
				if i < len(b) {
					b[i] = c
				}
			case 1:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 2:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default:
				o := quickSeeds[rng.IntN(len(quickSeeds))]
				j := rng.IntN(len(o) + 1)
				k := j + rng.IntN(len(o)-j+1)
				b = append(b[:i], append([]byte(o[j:k]), b[i:]...)...)
			}
		}
		checkQuick(t, b, 10000)
		checkQuick(t, b, 4)
	}
}

// UncheckedMember takes only a plain name right after the '{' or the ',', its ':' right
// after it, and does not record it: Member does not see it as a duplicate.
func TestUncheckedMember(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`{"a":1,"a":2,"b" :3, "c":4,"d\u0065":5,"é":6}`), 8)
	if err := s.EnterObject(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; ; i++ {
		name, ok := s.UncheckedMember(i)
		if !ok {
			n, more, err := s.Member(i)
			if err != nil || !more {
				t.Fatalf("member %d: %v, %v (after %q)", i, more, err, got)
			}
			name = append([]byte("M:"), n...)
		}
		got = append(got, string(name))
		if err := s.Skip(); err != nil {
			t.Fatal(err)
		}
		if s.Peek() == '}' {
			break
		}
	}
	if want := "a a M:b M:c M:de M:é"; strings.Join(got, " ") != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if s.NumNames() != 4 {
		t.Fatalf("%d names recorded, want 4", s.NumNames())
	}
}

// skipPlainRef is skipPlain one byte at a time.
func skipPlainRef(data []byte, i int) int {
	for i < len(data) && data[i] >= 0x20 && data[i] < 0x80 && data[i] != '"' && data[i] != '\\' {
		i++
	}
	return i
}

// FuzzSkipPlain holds skipPlain, eight bytes at a time, against a byte loop, from every
// start.
func FuzzSkipPlain(f *testing.F) {
	f.Add([]byte("plain text, then a \"quote\" and a \\ and \x1f and \x7f\x80é\xff"))
	f.Add([]byte(`aaaaaaaaaaaaaaaaaaaaaaaa"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := range len(data) + 1 {
			if got, want := skipPlain(data, i), skipPlainRef(data, i); got != want {
				t.Fatalf("skipPlain(%q, %d) = %d, want %d", data, i, got, want)
			}
		}
	})
}

// TestRandomSkipPlain runs FuzzSkipPlain's check over random inputs in every run: every
// byte value at every place of a word, among plain bytes.
func TestRandomSkipPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 10))
	for c := range 256 {
		for n := 1; n <= 24; n++ {
			for at := range n {
				b := bytes.Repeat([]byte{'a' + byte(r.IntN(26))}, n)
				b[at] = byte(c)
				for i := range n + 1 {
					if got, want := skipPlain(b, i), skipPlainRef(b, i); got != want {
						t.Fatalf("skipPlain(%q, %d) = %d, want %d", b, i, got, want)
					}
				}
			}
		}
	}
	for range 2000 {
		b := make([]byte, r.IntN(40))
		for j := range b {
			b[j] = byte(r.IntN(256))
			if r.IntN(4) > 0 {
				b[j] = byte(0x20 + r.IntN(0x60))
			}
		}
		for i := range len(b) + 1 {
			if got, want := skipPlain(b, i), skipPlainRef(b, i); got != want {
				t.Fatalf("skipPlain(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
}

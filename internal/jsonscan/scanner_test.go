package jsonscan

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// validate reads data as one whole JSON text.
func validate(data []byte, maxDepth int) error {
	var s Scanner
	s.Reset(data, maxDepth)
	if err := s.Skip(); err != nil {
		return err
	}
	return s.End()
}

var cases = []struct {
	in, err, ptr string // err: "" when valid, else a substring of the message
}{
	{`{}`, "", ""},
	{` [ 1 , -0.5e+10 , "x" , true , false , null , {} , [] ] `, "", ""},
	{`{"a":{"b":[1,{"c":"\u00e9\ud83d\ude00\n\"\\\/"}]}}`, "", ""},
	{`"\u0000 \uffff é 😀"`, "", ""},
	{`0`, "", ""},
	{`-0`, "", ""},
	{`1E5`, "", ""},
	{`{"a":1,"b":2}`, "", ""},
	{`{"a":1,"\u0061":2}`, "duplicate object member name \"a\"", ""},
	{`{"a":{"x":1,"x":2}}`, "duplicate", "/a"},
	{`[{"a":[0,{"b":tru}]}]`, "expected the literal true", "/0/a/1/b"},
	{``, "empty input", ""},
	{`   `, "empty input", ""},
	{`{`, "unexpected EOF", ""},
	{`{"a"}`, "expected ':'", ""},
	{`{"a":1,}`, "a string for an object member name", ""},
	{`[1,]`, "the start of a value", "/1"},
	{`[1 2]`, "',' or ']'", ""},
	{`{"a":1 "b":2}`, "',' or '}'", ""},
	{`{1:2}`, "member name", ""},
	{`01`, "after the top-level value", ""},
	{`-`, "a digit in a number", ""},
	{`1.`, "after the decimal point", ""},
	{`1e`, "in an exponent", ""},
	{`+1`, "the start of a value", ""},
	{`.5`, "the start of a value", ""},
	{`nul`, "the literal null", ""},
	{`nulll`, "after the top-level value", ""},
	{`"abc`, "EOF inside a string", ""},
	{"\"a\tb\"", "control character", ""},
	{"\"\xff\"", "invalid UTF-8", ""},
	{"\"\xed\xa0\x80\"", "invalid UTF-8", ""}, // a surrogate encoded in UTF-8
	{`"\ud800"`, "unpaired surrogate", ""},
	{`"\udc00"`, "unpaired surrogate", ""},
	{`"\ud800\u0041"`, "unpaired surrogate", ""},
	{`"\x"`, "invalid escape", ""},
	{`"\u12g4"`, "invalid \\u escape", ""},
	{`[] []`, "after the top-level value", ""},
	{"\xef\xbb\xbf{}", "the start of a value", ""},
	{`{"a/b~c":[x]}`, "the start of a value", "/a~1b~0c/0"},
}

func TestScanner(t *testing.T) {
	t.Parallel()
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", c.in), func(t *testing.T) {
			t.Parallel()
			err := validate([]byte(c.in), 64)
			if jsontext.Value(c.in).IsValid() != (err == nil) {
				t.Errorf("jsonscan says %v, jsontext disagrees", err)
			}
			switch {
			case c.err == "" && err != nil:
				t.Errorf("%v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("got %v, want %q", err, c.err)
			case c.err != "" && err.(*Error).Pointer() != c.ptr:
				t.Errorf("pointer %q, want %q", err.(*Error).Pointer(), c.ptr)
			}
		})
	}
}

func TestDepth(t *testing.T) {
	t.Parallel()
	at := strings.Repeat("[", 5) + strings.Repeat("]", 5)
	if err := validate([]byte(at), 5); err != nil {
		t.Fatalf("depth 5 of 5: %v", err)
	}
	over := `{"a":` + at + `}`
	err := validate([]byte(over), 5)
	if e, ok := err.(*Error); !ok || !e.Depth || e.Pointer() != "/a/0/0/0/0" {
		t.Fatalf("depth 6 of 5: %#v", err)
	}
}

// TestLargeObject crosses setThreshold: duplicates are still found, in either half.
func TestLargeObject(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	ok := b.String() + "}"
	if err := validate([]byte(ok), 8); err != nil {
		t.Fatal(err)
	}
	for _, dup := range []string{"k1", "k20", "k39"} {
		t.Run("duplicate "+dup, func(t *testing.T) {
			t.Parallel()
			if err := validate([]byte(b.String()+`,"`+dup+`":2}`), 8); err == nil || !strings.Contains(err.Error(), "duplicate") {
				t.Errorf("%v", err)
			}
		})
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	var s Scanner
	s.Reset([]byte(`{"a":1,"b\u0041":{"c":2},"d":3}`), 8)
	if err := s.EnterObject(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; ; i++ {
		name, more, err := s.Member(i)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			break
		}
		got = append(got, string(name))
		if err := s.Skip(); err != nil {
			t.Fatal(err)
		}
		if n := s.NumNames(); n != i+1 || !bytes.Equal(s.Name(i), name) || !bytes.Equal(s.Name(0), []byte("a")) {
			t.Fatalf("names after %q: %d, last %q", name, n, s.Name(n-1))
		}
	}
	if strings.Join(got, ",") != "a,bA,d" || s.End() != nil || s.Depth() != 0 {
		t.Fatalf("members %q, end %v, depth %d", got, s.End(), s.Depth())
	}
}

func TestAppendUnescaped(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"plain"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00x\u0000"`, `"a\u002fb"`} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			want, err := jsontext.AppendUnquote(nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := AppendUnescaped([]byte(">"), []byte(in[1:len(in)-1])); string(got) != ">"+string(want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// FuzzScanner holds the scanner against jsontext: both accept exactly the same inputs,
// and a string the scanner accepts unescapes as jsontext unquotes it.
func FuzzScanner(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := validate(data, 10000)
		if want := jsontext.Value(data).IsValid(); want != (err == nil) {
			t.Fatalf("%q: jsonscan: %v; jsontext valid: %v", data, err, want)
		}
		if err != nil {
			if e := err.(*Error); e.Offset < 0 || e.Offset > len(data) {
				t.Fatalf("%q: offset %d out of range", data, e.Offset)
			}
			return
		}
		var s Scanner
		s.Reset(data, 10000)
		if s.Peek() == '"' {
			raw, _, err := s.String()
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsontext.AppendUnquote(nil, raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := AppendUnescaped(nil, raw[1:len(raw)-1]); !bytes.Equal(got, want) {
				t.Fatalf("%q unescapes to %q, want %q", raw, got, want)
			}
		}
	})
}

func BenchmarkValidate(b *testing.B) {
	data := []byte(`{"type":"tool.call","id":"call-0191","replyTo":null,"sessionId":"session_1","sentAt":"2026-08-25T00:01:00.1234567+00:00","capability":"tool.exec","payload":{"toolId":"app.echo","arguments":{"text":"hello"},"callId":"c1"}}`)
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var s Scanner
		for b.Loop() {
			s.Reset(data, 256)
			if err := s.Skip(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsontext", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var d jsontext.Decoder
		for b.Loop() {
			d.Reset(bytes.NewReader(data))
			if _, err := d.ReadValue(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// After Rewind, reading goes on as if nothing had been read since the Mark: the same
// value comes back, and names read since (in the object open at the Mark, small or large
// enough to hold a set, and in objects entered since) are forgotten, while those read
// before still count as duplicates.
func TestRewind(t *testing.T) {
	for _, before := range []int{0, 3, setThreshold - 1, setThreshold + 2} {
		var head strings.Builder
		head.WriteString("{")
		for i := range before {
			fmt.Fprintf(&head, `"n%d":%d,`, i, i)
		}
		for _, tail := range []string{
			`"p":{"x":[1,{"y":"\u00e9"}],"z":2},"q":1}`,
			`"p":{"x":1,"x":2},"q":1}`, // the value itself is refused
		} {
			data := []byte(head.String() + tail)
			var s Scanner
			s.Reset(data, 8)
			if err := s.EnterObject(); err != nil {
				t.Fatal(err)
			}
			for i := range before {
				if _, _, err := s.Member(i); err != nil {
					t.Fatal(err)
				}
				if err := s.Skip(); err != nil {
					t.Fatal(err)
				}
			}
			m := s.Mark()
			// Read on: the member "p", into its value, past names that fill the set.
			for i := before; i < before+setThreshold+2; i++ {
				if _, more, err := s.Member(i); err != nil || !more {
					break
				}
				if s.EnterObject() != nil {
					break
				}
				if _, _, err := s.Member(0); err != nil {
					break
				}
			}
			s.Rewind(m)
			if s.Pos() != m.pos || s.Depth() != 1 {
				t.Fatalf("rewound to %d at depth %d", s.Pos(), s.Depth())
			}
			name, more, err := s.Member(before)
			if err != nil || !more || string(name) != "p" {
				t.Fatalf("after Rewind, the member %q, %v, %v", name, more, err)
			}
			v, verr := s.Value()
			want := tail[len(`"p":`):strings.LastIndex(tail, `,"q"`)]
			if tail == `"p":{"x":1,"x":2},"q":1}` {
				if verr == nil {
					t.Fatal("a duplicate read again is still refused")
				}
				continue
			}
			if verr != nil || string(v) != want {
				t.Fatalf("Value %s, %v; want %s", v, verr, want)
			}
			if _, _, err := s.Member(before + 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Skip(); err != nil {
				t.Fatal(err)
			}
			if _, more, err := s.Member(before + 2); err != nil || more {
				t.Fatalf("end of object: %v, %v", more, err)
			}
			// A name read before the Mark is still known.
			if before > 0 {
				dup := []byte(head.String() + `"n0":1}`)
				var d Scanner
				d.Reset(dup, 8)
				_ = d.EnterObject()
				for i := range before {
					_, _, _ = d.Member(i)
					_ = d.Skip()
				}
				m := d.Mark()
				_, _, _ = d.Member(before)
				d.Rewind(m)
				if _, _, err := d.Member(before); err == nil {
					t.Fatal("a name read before the Mark is no longer a duplicate")
				}
			}
		}
	}
}

package app

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// randomFlatType builds a struct type of the fields a flat plan takes and, now and then,
// one it must refuse (a float, a nested struct, a slice, a pointer, the string option, a
// name used twice).
func randomFlatType(r *rand.Rand) reflect.Type {
	leaves := []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[int](), reflect.TypeFor[int8](),
		reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[uint](),
		reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
		reflect.TypeFor[wire.Policy](), reflect.TypeFor[wire.Code](),
	}
	odd := []reflect.Type{
		reflect.TypeFor[float64](), reflect.TypeFor[[]string](),
		reflect.TypeFor[struct{ X int }](), reflect.TypeFor[*int](), reflect.TypeFor[[]byte](),
	}
	tags := []string{``, `json:"%s"`, `json:"%s,omitempty"`, `json:"%s,omitzero"`, `json:"%s,omitempty,omitzero"`,
		`json:",omitzero"`, `json:"-"`, `json:"%s,string"`}
	names := []string{"a", "b", "Name", "ü", `q"uote`, "<tag>", "F0"}
	n := r.Intn(7)
	fields := make([]reflect.StructField, n)
	for i := range fields {
		t := leaves[r.Intn(len(leaves))]
		if r.Intn(12) == 0 {
			t = odd[r.Intn(len(odd))]
		}
		tag := tags[r.Intn(len(tags))]
		if r.Intn(10) != 0 || tag == `json:"%s,string"` {
			tag = fmt.Sprintf(tag, fmt.Sprintf("f%d", i)) // distinct names, mostly
		} else {
			tag = fmt.Sprintf(tag, names[r.Intn(len(names))])
		}
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: t, Tag: reflect.StructTag(tag)}
	}
	defer func() {
		if recover() != nil { // a name reflect.StructOf refuses: no such type
			fields = nil
		}
	}()
	return reflect.StructOf(fields)
}

// A flat plan writes what wire.Marshal writes, byte for byte, for random flat types and
// values, pointers (nil included) and strings that need escaping or are not UTF-8 at all
// (which the plan hands to wire.Marshal: both must fail).
func TestFlatResultMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	strs := []string{"", "plain", `"quoted"`, `back\slash`, "tab\tnew\nline", "ctl\x00\x1f\x7f", "<&>", "caf\u00e9 \u2028\u2029",
		"\U0001F600", "bad\xffutf8", "\xed\xa0\x80", "Not signed in · sign in to sync"}
	planned := 0
	for range 2000 {
		typ := randomFlatType(r)
		for _, ty := range []reflect.Type{typ, reflect.PointerTo(typ)} {
			e := newFlatEncoder(ty)
			if e == nil {
				continue
			}
			planned++
			if ty.Kind() == reflect.Pointer {
				checkFlat(t, e, reflect.Zero(ty).Interface())
			}
			for range 10 {
				v, ok := quick.Value(typ, r)
				if !ok {
					t.Fatalf("no value of %v", typ)
				}
				for i := range typ.NumField() {
					f := v.Field(i)
					if !f.CanSet() {
						continue
					}
					switch {
					case f.Kind() == reflect.String && r.Intn(2) == 0:
						f.SetString(strs[r.Intn(len(strs))])
					case r.Intn(3) == 0:
						f.SetZero()
					}
				}
				if ty.Kind() == reflect.Pointer {
					p := reflect.New(typ)
					p.Elem().Set(v)
					v = p
				}
				checkFlat(t, e, v.Interface())
			}
		}
	}
	if planned < 1000 {
		t.Errorf("only %d random types got a plan", planned)
	}

	type appState struct { // the demo's app.get_state result
		Screen    string `json:"screen"`
		DarkMode  bool   `json:"darkMode"`
		NoteCount int    `json:"noteCount"`
		Account   string `json:"account,omitzero"`
		Status    string `json:"status"`
	}
	type nested struct {
		S appState `json:"s"`
	}
	type embedded struct{ appState }
	type floats struct {
		F float64 `json:"f"`
	}
	type stringOpt struct {
		N int `json:"n,string"`
	}
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[appState](): true, reflect.TypeFor[*appState](): true, reflect.TypeFor[struct{}](): true,
		reflect.TypeFor[nested](): false, reflect.TypeFor[embedded](): false, reflect.TypeFor[floats](): false,
		reflect.TypeFor[stringOpt](): false, reflect.TypeFor[**appState](): false, reflect.TypeFor[[]appState](): false,
		reflect.TypeFor[time.Time](): false, reflect.TypeFor[map[string]string](): false, reflect.TypeFor[any](): false,
		reflect.TypeFor[wire.Error](): false, // details are raw JSON
	} {
		if got := newFlatEncoder(typ) != nil; got != want {
			t.Errorf("%v: plan %t, want %t", typ, got, want)
		}
	}
}

// checkFlat compares e's encoding of v with wire.Marshal's, as a handler's result is
// encoded (encodeResult, appending to an exchange's buffer that holds an earlier result).
func checkFlat(t *testing.T, e *flatEncoder, v any) {
	t.Helper()
	want, werr := wire.Marshal(v)
	buf := []byte(`{"earlier":1}`)
	got, gerr := encodeResult("t.flat", v, e, &buf)
	if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) || !bytes.HasPrefix(buf, []byte(`{"earlier":1}`)) {
		t.Fatalf("%T %+v:\nplan    %s (%v)\nMarshal %s (%v)", v, v, got, gerr, want, werr)
	}
	if b, ok := e.encode(v); ok && !bytes.Equal(b, want) {
		t.Fatalf("%T %+v: the plan wrote %s, Marshal %s", v, v, b, want)
	}
}

// FuzzFlatResult holds a flat plan against wire.Marshal for arbitrary strings (invalid
// UTF-8 included) and numbers in every field kind it takes.
func FuzzFlatResult(f *testing.F) {
	type flat struct {
		S  string      `json:"s"`
		E  string      `json:"e,omitempty"`
		Z  string      `json:"z,omitzero"`
		B  bool        `json:"b,omitempty"`
		BZ bool        `json:"bz,omitzero"`
		I  int64       `json:"i,omitempty"`
		I8 int8        `json:"i8"`
		U  uint64      `json:"u,omitzero"`
		U8 uint8       `json:"u8"`
		P  wire.Policy `json:"policy,omitempty"`
		N  int
		x  int
	}
	e := newFlatEncoder(reflect.TypeFor[*flat]())
	if e == nil {
		f.Fatal("no plan for the fuzzed type")
	}
	f.Add("plain", "", "z", true, false, int64(-1), uint64(0), "read")
	f.Add("caf\u00e9 \u2028", "<&>", "", false, true, int64(0), uint64(1<<63), "")
	f.Add("bad\xff", "\x00", "\"", false, false, int64(-1<<63), uint64(7), "\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s, es, z string, b, bz bool, i int64, u uint64, p string) {
		v := &flat{S: s, E: es, Z: z, B: b, BZ: bz, I: i, I8: int8(i), U: u, U8: uint8(u), P: wire.Policy(p), N: int(i), x: 1}
		checkFlat(t, e, v)
		checkFlat(t, e, (*flat)(nil))
	})
}

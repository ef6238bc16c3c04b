package app

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// randomType builds a struct type from plain and not so plain fields, depth levels deep.
func randomType(r *rand.Rand, depth int) reflect.Type {
	leaves := []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[uint16](),
		reflect.TypeFor[uint64](), reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[string](),
		reflect.TypeFor[[]string](), reflect.TypeFor[map[string]int](), reflect.TypeFor[*int](), reflect.TypeFor[[3]bool](),
		reflect.TypeFor[[]byte](), reflect.TypeFor[time.Time](), reflect.TypeFor[*string](),
	}
	tags := []string{``, `json:"%s"`, `json:"%s,omitempty"`, `json:"%s,omitzero"`, `json:"%s,string"`, `json:"-"`}
	n := 1 + r.Intn(5)
	fields := make([]reflect.StructField, n)
	for i := range fields {
		t := leaves[r.Intn(len(leaves))]
		if depth > 0 && r.Intn(4) == 0 {
			t = randomType(r, depth-1)
			switch r.Intn(3) {
			case 1:
				t = reflect.SliceOf(t)
			case 2:
				t = reflect.PointerTo(t)
			}
		}
		tag := tags[r.Intn(len(tags))]
		if tag == `json:"-"` {
			t = reflect.TypeFor[int]() // skipped by the json package, filled by testing/quick
		} else if tag != "" {
			tag = fmt.Sprintf(tag, fmt.Sprintf("f%d", r.Intn(2*n)))
		}
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: t, Tag: reflect.StructTag(tag)}
	}
	return reflect.StructOf(fields)
}

// Whenever conformsByConstruction lets a result type skip validation, the JSON of random
// values of it matches the schema inferred from it. The types are random structs of plain
// fields and of fields that must be validated ([]byte, time.Time, the string option,
// clashing names); each must either be refused or conform.
func TestConformsByConstruction(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	trusted := 0
	for range 400 {
		typ := randomType(r, 2)
		if !conformsByConstruction(typ, map[reflect.Type]bool{}) {
			continue
		}
		schemaJSON, err := inferSchema(typ, false)
		if err != nil {
			continue // not a type Register accepts
		}
		schema, err := schema.Compile(schemaJSON)
		if err != nil {
			t.Fatalf("%v: %s: %v", typ, schemaJSON, err)
		}
		trusted++
		for range 20 {
			v, ok := quick.Value(typ, r)
			if !ok {
				t.Fatalf("no value of %v", typ)
			}
			b, err := wire.Marshal(v.Interface())
			if err != nil {
				continue // the encoding fails first (NaN, invalid UTF-8)
			}
			if vs := schema.Validate(b); len(vs) > 0 {
				t.Fatalf("%v skips validation, but %s does not match %s: %v", typ, b, schemaJSON, vs)
			}
		}
	}
	if trusted < 50 {
		t.Errorf("only %d of 400 random types skip validation", trusted)
	}

	type plain struct {
		A int               `json:"a"`
		B []string          `json:"b,omitempty"`
		C map[string]*bool  `json:"c,omitzero"`
		D jsontext.Value    `json:"d"`
		E any               `json:"e"`
		F *struct{ X bool } `json:"f"`
	}
	type recursive struct {
		Next *recursive `json:"next"`
	}
	type embedded struct{ plain }
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[plain](): true, reflect.TypeFor[*plain](): true, reflect.TypeFor[[]plain](): true,
		reflect.TypeFor[map[string]float64](): true, reflect.TypeFor[any](): true, reflect.TypeFor[jsontext.Value](): true,
		reflect.TypeFor[[]byte](): false, reflect.TypeFor[time.Time](): false, reflect.TypeFor[recursive](): false,
		reflect.TypeFor[embedded](): false, reflect.TypeFor[wire.Policy](): true, reflect.TypeFor[*wire.Error](): true,
		reflect.TypeFor[fmt.Stringer](): false, reflect.TypeFor[map[wire.Policy]int](): true, reflect.TypeFor[chan int](): false,
	} {
		if got := conformsByConstruction(typ, map[reflect.Type]bool{}); got != want {
			t.Errorf("%v: %t, want %t", typ, got, want)
		}
	}
}

// A typed tool whose result skips validation still fails a nil result: null is not the
// object its schema describes.
func TestConformingResultNil(t *testing.T) {
	type out struct {
		N int `json:"n"`
	}
	a := New(Options{})
	var nilResult bool
	if err := Register(a, catalog.Definition{ID: "t.nil", Name: "Nil", Description: "d", Category: "c", Policy: wire.PolicyRead},
		func(ctx context.Context, c *Call, _ struct{}) (*out, error) {
			if nilResult {
				return nil, nil
			}
			return &out{N: 1}, nil
		}); err != nil {
		t.Fatal(err)
	}
	x := &exchange{app: a}
	if o := x.run(t.Context(), wire.Call{ToolID: "t.nil"}, false); !o.Success || string(o.Result) != `{"n":1}` {
		t.Fatalf("%+v", o)
	}
	nilResult = true
	if o := x.run(t.Context(), wire.Call{ToolID: "t.nil"}, false); o.Success || o.Error.Code != wire.CodeResultSchemaInvalid {
		t.Fatalf("nil result: %+v", o)
	}
}

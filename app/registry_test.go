package app

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

type inferIn struct {
	Name     string            `json:"name" jsonschema:"the name"`
	Count    int               `json:"count,omitzero"`
	Ratio    float64           `json:"ratio,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Labels   map[string]string `json:"labels,omitzero"`
	When     time.Time         `json:"when,omitzero"`
	Optional *bool             `json:"optional,omitzero"`
	Raw      jsontext.Value    `json:"raw,omitzero"`
	Nested   struct {
		ID string `json:"id"`
	} `json:"nested"`
	//lint:ignore U1000 an unexported field, present to show that inference skips it
	skipped int
	Ignored string `json:"-"`
}

func TestInferSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ       reflect.Type
		arguments bool
		want      string
		err       string
	}{
		{reflect.TypeFor[inferIn](), true, `{"type":"object","properties":{"name":{"type":"string","description":"the name"},"count":{"type":"integer"},"ratio":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},"labels":{"type":"object","additionalProperties":{"type":"string"}},"when":{"type":"string","format":"date-time"},"optional":{"type":["null","boolean"]},"raw":true,"nested":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}},"required":["name","nested"]}`, ""},
		{reflect.TypeFor[*inferIn](), false, `{"type":"object","properties":{"name"`, ""},
		{reflect.TypeFor[struct{}](), true, `{"type":"object"}`, ""},
		{reflect.TypeFor[map[string]int](), true, `{"type":"object","additionalProperties":{"type":"integer"}}`, ""},
		{reflect.TypeFor[jsontext.Value](), true, `{"type":"object","additionalProperties":true}`, ""},
		{reflect.TypeFor[jsontext.Value](), false, `{}`, ""},
		{reflect.TypeFor[any](), false, `{}`, ""},
		{reflect.TypeFor[[]int](), false, `{"type":"array","items":{"type":"integer"}}`, ""},
		{reflect.TypeFor[string](), false, `{"type":"string"}`, ""},
		{reflect.TypeFor[string](), true, "", "must be a JSON object"},
		{reflect.TypeFor[[]string](), true, "", "must be a JSON object"},
		{reflect.TypeFor[map[int]string](), true, "", "unsupported map key"},
		{reflect.TypeFor[chan int](), false, "", "chan"},
	} {
		t.Run(fmt.Sprintf("%v arguments=%v", tc.typ, tc.arguments), func(t *testing.T) {
			t.Parallel()
			got, err := inferSchema(tc.typ, tc.arguments)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("%v: err %v, want %q", tc.typ, err, tc.err)
				}
			case err != nil:
				t.Errorf("%v: %v", tc.typ, err)
			case !strings.HasPrefix(string(got), tc.want):
				t.Errorf("%v:\n got %s\nwant %s", tc.typ, got, tc.want)
			}
		})
	}
}

func TestRegisterErrors(t *testing.T) {
	t.Parallel()
	noop := func(ctx context.Context, c *Call) (any, error) { return nil, nil }
	good := def("t.good", "Good", "t", wire.PolicyRead)
	good.ArgumentsSchema = []byte(`{"type":"object"}`)
	good.ResultSchema = []byte(`{}`)
	with := func(f func(*catalog.Definition)) catalog.Definition {
		d := good
		f(&d)
		return d
	}
	a := New(Options{})
	if err := a.Register(Tool{Definition: good, Handler: noop}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tool Tool
		want string
	}{
		{"duplicate", Tool{Definition: good, Handler: noop}, "already registered"},
		{"no handler", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t.other" })}, "no handler"},
		{"bad id", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t..x" }), Handler: noop}, "empty dotted segment"},
		{"bad policy", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t.p"; d.Policy = "admin" }), Handler: noop}, "policy"},
		{"invalid schema", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t.s"; d.ArgumentsSchema = []byte(`{"type":"objekt"}`) }), Handler: noop}, "argumentsSchema"},
		{"schema not json", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t.s"; d.ResultSchema = []byte(`{`) }), Handler: noop}, "resultSchema"},
		{"arguments not object", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t.s"; d.ArgumentsSchema = []byte(`{"type":"array"}`) }), Handler: noop}, "object"},
		{"missing schema", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t.s"; d.ResultSchema = nil }), Handler: noop}, "missing"},
		{"bad encoding", Tool{Definition: with(func(d *catalog.Definition) { d.ID = "t.s"; d.ArgumentEncoding = "xml" }), Handler: noop}, "argumentEncoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := a.Register(tc.tool)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			}
		})
	}
	if err := a.Register(Tool{Definition: good, Handler: noop}); !errors.Is(err, ErrDuplicateTool) {
		t.Errorf("duplicate: %v is not ErrDuplicateTool", err)
	}

	// typed
	typedDef := def("t.typed", "Typed", "t", wire.PolicyRead)
	if err := Register[string, int](a, typedDef, func(ctx context.Context, c *Call, in string) (int, error) { return 0, nil }); err == nil || !strings.Contains(err.Error(), "arguments") {
		t.Errorf("string arguments: %v", err)
	}
	if err := Register[struct{}, chan int](a, typedDef, func(ctx context.Context, c *Call, in struct{}) (chan int, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "result") {
		t.Errorf("chan result: %v", err)
	}
	if err := Register[struct{}, int](a, typedDef, nil); err == nil {
		t.Error("nil handler accepted")
	}
	if err := Register(a, typedDef, func(ctx context.Context, c *Call, in struct{}) (int, error) { return 0, nil }); err != nil {
		t.Error(err)
	}
	if err := Register(a, typedDef, func(ctx context.Context, c *Call, in struct{}) (int, error) { return 0, nil }); !errors.Is(err, ErrDuplicateTool) {
		t.Errorf("typed duplicate: %v", err)
	}
}

// TestRegisterCopiesDefinition: the registry keeps its own copy of the definition.
func TestRegisterCopiesDefinition(t *testing.T) {
	t.Parallel()
	a := New(Options{IDs: transcript.CountingIDs(), Clock: func() time.Time { return fixedTime }})
	d := def("t.copy", "Copy", "t", wire.PolicyRead)
	d.ArgumentsSchema = []byte(`{"type":"object"}`)
	d.ResultSchema = []byte(`{}`)
	d.PrerequisiteToolIDs = []string{"t.pre"}
	if err := a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{app: a}
	_, before := response(t, f.handle(t, `{"type":"tool.query","id":"q","payload":{}}`))
	d.ArgumentsSchema[1] = 'x'
	d.PrerequisiteToolIDs[0] = "t.changed"
	_, after := response(t, f.handle(t, `{"type":"tool.query","id":"q","payload":{}}`))
	if string(before) != string(after) {
		t.Fatalf("the catalog changed with the caller's definition:\n%s\n%s", before, after)
	}
}

func TestParseQuery(t *testing.T) {
	t.Parallel()
	base := wire.Query{Detail: wire.DetailFull, Limit: wire.DefaultQueryLimit}
	for _, tc := range []struct {
		payload string
		want    wire.Query
	}{
		{``, base},
		{`[1]`, base},
		{`"index"`, base},
		{`{}`, base},
		{`{"detail":" INDEX "}`, wire.Query{Detail: "index", Limit: 1000}},
		{`{"detail":"Definitions"}`, wire.Query{Detail: "definitions", Limit: 1000}},
		{`{"detail":"bogus"}`, base},
		{`{"detail":7}`, base},
		{`{"ids":["a"," b ","a","",3,null,{"x":["y"]},"c"]}`, wire.Query{Detail: "full", Limit: 1000, IDs: []string{"a", "b", "c"}}},
		// Of the ids the app does not register, the first is kept: it matches nothing.
		{`{"ids":["nope","a","other","nope"]}`, wire.Query{Detail: "full", Limit: 1000, IDs: []string{"nope", "a"}}},
		{`{"ids":"a"}`, base},
		{`{"query":"x y","feature":"z","policy":"Write"}`, wire.Query{Detail: "full", Limit: 1000, Query: "x y", Feature: "z", Policy: "Write"}},
		{`{"query":5,"policy":true}`, base},
		{`{"executableOnly":true}`, wire.Query{Detail: "full", Limit: 1000, ExecutableOnly: true}},
		{`{"executableOnly":"true"}`, base},
		{`{"limit":5}`, wire.Query{Detail: "full", Limit: 5}},
		{`{"limit":5000}`, wire.Query{Detail: "full", Limit: 1000}},
		{`{"limit":-4}`, wire.Query{Detail: "full", Limit: 1}},
		{`{"limit":2.5,"maxResults":3}`, base},
		{`{"limit":null,"maxResults":3}`, base},
		{`{"maxResults":3}`, wire.Query{Detail: "full", Limit: 3}},
		{`{"maxResults":"3"}`, base},
		{`{"limit":99999999999}`, base},
		{`{"ifRevision":"  r ","ifAvailabilityRevision":" "}`, wire.Query{Detail: "full", Limit: 1000, IfRevision: "r"}},
	} {
		t.Run(tc.payload, func(t *testing.T) {
			t.Parallel()
			got := parseQuery(jsontext.Value(tc.payload), func(id string) bool { return id == "a" || id == "b" || id == "c" })
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s:\n got %+v\nwant %+v", tc.payload, got, tc.want)
			}
		})
	}
}

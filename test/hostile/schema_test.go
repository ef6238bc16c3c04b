package hostile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Hostile schemas: a schema is an app's input to whoever validates against it or renders
// it. Its cost must be bounded where it enters (the host's catalog, the player's forms,
// the SDK's registry) and per validation (the host's and the app's validators).

// nestedAlternatives is the 1.3 KB schema of the report: anyOf nested levels deep through
// $defs, each level offering the next twice. A standard validator evaluates 2^levels
// branches for one value that matches none.
func nestedAlternatives(levels int) string {
	var defs []string
	for i := range levels {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, levels))
	return `{"type":"object","properties":{"v":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
}

// recursiveAlternatives is a small, legitimate-looking recursive schema whose two
// alternatives both descend into the value: within every bound at registration, but a
// value nested n deep makes a validator take 2^n steps.
const recursiveAlternatives = `{"type":"object","properties":{"v":{"$ref":"#/$defs/n"}},"$defs":{"n":{"anyOf":[` +
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"additionalProperties":true},` +
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["b"],"additionalProperties":true}]}}}`

// deepValue is {"v":{"a":{"a":…5…}}}, depth levels of "a".
func deepValue(depth int) string {
	return `{"v":` + strings.Repeat(`{"a":`, depth) + `5` + strings.Repeat(`}`, depth) + `}`
}

func rawEntry(id, argumentsSchema string) wire.ToolEntry {
	return wire.ToolEntry{ID: id, Name: id, Description: "Raw tool " + id + ".", Category: "raw", Policy: wire.PolicyRead,
		ArgumentsSchema: jsontext.Value(argumentsSchema), DefinitionRevision: "sha256:" + id}
}

// TestHostileSchemaAtIntake: the host keeps a definition whose schema is beyond the bounds
// without its schemas and refuses to call the tool, with a reason; the player renders no
// form from the schema; the app's other tools are unaffected. A schema within the bounds
// whose alternatives multiply with the value's depth is validated by the host within a
// budget: a deep value is refused at once instead of taking seconds and gigabytes.
func TestHostileSchemaAtIntake(t *testing.T) {
	h := newTestHost(t, func(o *host.Options) { o.Tools.ValidateArguments = true })
	deep := nestedAlternatives(20)
	_, sess := connectRaw(t, h, rawApp{appID: "dev.ansight.rawschema", tools: []wire.ToolEntry{
		rawEntry("raw.deep", deep), rawEntry("raw.recursive", recursiveAlternatives), rawEntry("raw.fine", `{"type":"object"}`)}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cat, err := sess.Tools().Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := cat.Tool("raw.deep")
	if e == nil || e.Denial == nil || e.Denial.Code != wire.CodeSchemaTooComplex || len(e.ArgumentsSchema) != 0 || !strings.Contains(e.Denial.Reason, "expands") {
		t.Fatalf("the %d-byte hostile schema entered the host's catalog: %+v", len(deep), e)
	}
	if f := cat.Tool("raw.fine"); f == nil || f.Denial != nil {
		t.Fatalf("a sound tool of the same app was affected: %+v", f)
	}
	_, err = sess.Tools().Call(ctx, wire.Call{ToolID: "raw.deep", Arguments: jsontext.Value(`{"v":5}`)})
	if r, ok := errors.AsType[*tools.RefusalError](err); !ok || r.Err.Code != wire.CodeSchemaTooComplex {
		t.Fatalf("calling the tool: %v, want a refusal by the host", err)
	}

	_, err = sess.Tools().Call(ctx, wire.Call{ToolID: "raw.recursive", Arguments: jsontext.Value(deepValue(18))})
	if r, ok := errors.AsType[*tools.RefusalError](err); !ok || r.Err.Code != wire.CodeArgumentsSchemaInvalid || !strings.Contains(string(r.Err.Details), schema.CodeValidationBudget) {
		t.Fatalf("a value 18 deep against multiplying alternatives: %v, want a refusal for the validation budget", err)
	}

	form, err := player.FormOf(jsontext.Value(deep))
	if err != nil || form.Kind != player.KindJSON || !strings.Contains(form.Reason, "expands") {
		t.Fatalf("the player's form of the hostile schema: %+v %v", form, err)
	}
}

// TestHostileArgumentsToApp: a malicious host sends a value that makes the app's own
// (legitimate, recursive) schema multiply its work: the app refuses it within its budget
// with tool_arguments_schema_invalid, and keeps serving.
func TestHostileArgumentsToApp(t *testing.T) {
	a := hostileApp(t)
	def := catalog.Definition{ID: "h.tree", Name: "h.tree", Description: "Takes a tree.", Category: "hostile", Policy: wire.PolicyRead,
		ArgumentsSchema: jsontext.Value(recursiveAlternatives)}
	if err := app.Register(a, def, func(ctx context.Context, c *app.Call, in map[string]any) (none, error) { return none{}, nil }); err != nil {
		t.Fatalf("a recursive schema within the bounds was refused at registration: %v", err)
	}
	h := connectApp(t, a)
	h.send(t, transport.MessageText, []byte(callMsg(`{"toolId":"h.tree","arguments":`+deepValue(18)+`}`)))
	got := h.answer(t, "hostile")
	rejected(wire.CodeArgumentsSchemaInvalid).check(t, [][]byte{got})
	if !strings.Contains(string(got), schema.CodeValidationBudget) {
		t.Fatalf("the refusal does not name the budget: %s", got)
	}
	h.probe(t)
}

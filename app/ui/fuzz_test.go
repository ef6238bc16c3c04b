package ui_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// FuzzToolArguments sends arbitrary arguments to every UI tool through the runtime. Schema
// validation refuses most of them; whatever passes must be handled: the answer is a result
// that matches the result schema, or a tool failure of the toolkit's — never a panic
// (tool_execution_exception) nor a result that breaks its own schema.
func FuzzToolArguments(f *testing.F) {
	tools := []string{"ui.get_visual_tree", "ui.query_nodes", "ui.perform_action", "ui.wait", "ui.get_screenshot",
		"ui.inspect_node", "ui.show_overlay", "ui.update_overlay", "ui.remove_overlay", "ui.clear_overlays",
		"ui.get_overlay", "ui.query_overlays"}
	for i, args := range []string{
		`{}`,
		`{"role":"button","maxResults":1}`,
		`{"reference":{"source":"native","snapshotId":"native:1:00","revision":1,"nodeId":"ok"},"action":"tap"}`,
		`{"condition":"notExists","nodeId":"x","timeoutMilliseconds":-5,"pollMilliseconds":0}`,
		`{"format":"jpeg","quality":1,"maxWidth":1}`,
		`{"maxDepth":0,"maxNodes":1,"rootNodeId":"name","includeBounds":false}`,
		// The official host's defaults and the official SDKs' optional forms.
		`{"maxDepth":32,"includeComputedStyles":false}`,
		`{"format":"jpeg","quality":80,"maxWidth":1280,"afterScreenUpdates":false}`,
		`{"snapshotId":"native:1:00","nodeId":"switch","action":"setValue","value":null,"index":2,"checked":true,"options":{}}`,
		`{"condition":"exists","snapshotId":"x","rootNodeId":"root","maxDepth":1,"maxNodes":2,"maxResults":0}`,
		`{"role":null,"textContains":"","includeProperties":true,"root":"window","includeInactivePages":true}`,
		`{"nodeId":"name","includeAncestors":true,"includeDescendants":true,"includeProperties":false}`,
		`{"overlayId":"a","rects":[{"x":1,"y":1,"width":1e308,"height":2,"label":null}],"strokeColor":"#abc","fillColor":"red","metadata":{"k":"v"}}`,
		`{"overlayId":"a","nodeId":"name","metadataMode":"replace","metadata":null,"durationMs":-1,"strokeWidth":-3}`,
		`{"metadataKey":"k","metadataValue":"V"}`,
	} {
		f.Add(uint8(i), args)
	}
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		if v := jsontext.Value(args); !v.IsValid() || v.Kind() != '{' {
			t.Skip("not a JSON object: the envelope would not parse")
		}
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, &fakeScreen{doneAfter: 2})
			id := tools[int(tool)%len(tools)]
			// A capture first, so that revision-1 references can be valid.
			h.Call("ui.get_visual_tree", `{}`)
			r := h.Send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, id, args))
			if r.Err != nil {
				switch r.Err.Code {
				case wire.CodeExecutionException, wire.CodeResultSchemaInvalid, wire.CodeExecutionFailed:
					t.Fatalf("%s(%s): %v %s", id, args, r.Err, r.Err.Details)
				}
			}
		})
	})
}

package uiauto

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// FuzzParseInteraction feeds any line to app interact's request reader: it never panics,
// and what it accepts is valid again after a round trip through JSON.
func FuzzParseInteraction(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","command":"tap","target":{"automationId":"save"}}`,
		`{"id":"2","command":"swipe","x":0.5,"y":0.6,"endX":0.5,"endY":0.4,"durationMs":300}`,
		`{"id":"3","command":"batch","commands":[{"id":"a","command":"back"},{"id":"b","command":"type","value":"x"}]}`,
		`{"id":"4","command":"task","taskId":"t","input":{"a":[1,2]}}`,
		`{"id":"5","command":"pinch","x":0,"y":1,"scale":4}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := parseInteraction(line, false, true)
		if req == nil {
			t.Fatal("no request")
		}
		if err != nil {
			return
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseInteraction(b, false, true)
		if err != nil {
			t.Fatalf("%s accepted, its re-encoding %s refused: %v", line, b, err)
		}
		if again.ID != req.ID || again.Command != req.Command {
			t.Fatalf("round trip changed %+v to %+v", req, again)
		}
	})
}

// FuzzRun feeds any request (as the host API decodes one) to Run over the official
// Android tree: it never panics, a request it runs has passed Validate, and every outcome
// names its operation and has a result.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		`{"operation":"tap","selector":{"automationId":"save"}}`,
		`{"operation":"find","selector":{"text":"s","caseSensitive":true,"index":2}}`,
		`{"operation":"swipe","startX":0.1,"startY":0.9,"endX":0.1,"endY":0.1}`,
		`{"operation":"assert","selector":{"role":"button"},"count":3,"expectedText":"Save"}`,
		`{"operation":"wait","condition":"hidden","selector":{"text":"Help"},"timeoutMs":100,"pollMs":100}`,
		`{"operation":"snapshot","detail":"full","maxNodes":3}`,
		`{"operation":"pinch","scale":2,"centerX":0.5,"centerY":0.5}`,
		`{"operation":"type","selector":{"automationId":"search"},"value":"milk","append":true}`,
		`{"operation":"tap","x":0.5,"y":0.25,"timeoutMs":0}`,
	} {
		f.Add([]byte(s))
	}
	tree, err := os.ReadFile("../wire/uitree/testdata/official/android-views.json")
	if err != nil {
		f.Fatal(err)
	}
	call := func(_ context.Context, toolID string, _ jsontext.Value) (jsontext.Value, error) {
		if toolID == VisualTreeToolID {
			return tree, nil
		}
		return nil, &wire.Error{Code: wire.CodeStaleNodeReference, Message: "gone"}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req Request
		if wire.Unmarshal(data, &req) != nil {
			return
		}
		if req.TimeoutMs == nil || *req.TimeoutMs > 0 {
			zero := 0 // keep each input to one attempt
			req.TimeoutMs = &zero
		}
		if req.Operation == OpWait {
			hundred := 100
			req.TimeoutMs = &hundred
		}
		out, err := Run(context.Background(), call, req)
		if err != nil {
			if wire.CodeOf(err) != wire.CodeBadRequest || req.Validate() == nil {
				t.Fatalf("%s: %v", data, err)
			}
			return
		}
		if req.Validate() != nil || out.Operation != req.Operation || out.Result == nil || out.Message == "" {
			t.Fatalf("%s: %+v", data, out)
		}
		if _, err := json.Marshal(out); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("outcome does not encode: %v", err)
		}
	})
}

package uiauto_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/uiauto"
)

// replies runs an interaction over the lines and decodes every reply.
func replies(t *testing.T, f *form, opts uiauto.InteractOptions, lines ...string) []map[string]any {
	t.Helper()
	opts.Call, opts.SessionID = caller(t, f), "s1"
	var out bytes.Buffer
	if err := uiauto.Interact(context.Background(), strings.NewReader(strings.Join(lines, "\n")), &out, opts); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("reply %q: %v", l, err)
		}
		if m["schema"] != uiauto.InteractionSchema || m["sessionId"] != "s1" {
			t.Fatalf("reply %v", m)
		}
		got = append(got, m)
	}
	return got
}

// TestInteract: the ready line, targeted and coordinate commands, typing into the focused
// field, a batch that stops at its first failure, refused requests that leave the
// interaction open, and exit.
func TestInteract(t *testing.T) {
	t.Parallel()
	f := &form{name: "x"}
	got := replies(t, f, uiauto.InteractOptions{},
		`{"id":"1","command":"tap","target":{"automationId":"saveButton"}}`,
		`{"id":"2","command":"tap","x":0.5,"y":0.325}`, // (50, 65): the label inside the tappable box
		`{"id":"3","command":"type","target":{"text":"Name"},"value":"Ada","replaceExisting":true}`,
		`{"id":"4","command":"swipe","x":0.5,"y":0.6,"endX":0.5,"endY":0.5,"durationMs":300}`,
		`{"id":"5","command":"tap","target":{"automationId":"saveButton"},"x":0.1,"y":0.1}`,
		`{"id":"6","command":"tap","target":{"automationId":"saveButton"},"colour":"red"}`,
		`{"id":"7","Command":"tap"}`,
		`{"id":"8","command":"batch","commands":[{"id":"8a","command":"back"},{"id":"8b","command":"tap","target":{"text":"Nothing"}},{"id":"8c","command":"back"}]}`,
		`{"id":"9","command":"tasks"}`,
		`not json`,
		``,
		`{"id":"10","command":"exit"}`,
		`{"id":"11","command":"snapshot"}`, // after exit: never read
	)
	want := []struct{ id, command, err string }{
		{"", "ready", ""}, {"1", "tap", ""}, {"2", "tap", ""}, {"3", "type", ""}, {"4", "swipe", ""},
		{"5", "tap", uiauto.InteractInvalidRequest}, {"6", "tap", uiauto.InteractInvalidRequest},
		{"7", "invalid", uiauto.InteractInvalidRequest}, {"8", "batch", uiauto.InteractBatchStopped},
		{"9", "tasks", uiauto.InteractInvalidRequest}, {"", "invalid", uiauto.InteractInvalidRequest}, {"10", "exit", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d replies, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		r := got[i]
		id, _ := r["id"].(string)
		errCode, _ := r["error"].(string)
		if id != w.id || r["command"] != w.command || errCode != w.err || (w.err == "") != (r["succeeded"] == true) {
			t.Errorf("reply %d = %v, want %+v", i, r, w)
		}
	}
	// Refusals say what is wrong in JSON's words, not Go's.
	for i, want := range map[int]string{6: `unknown member "colour" at /colour`, 7: `unknown member "Command" at /Command`, 10: "invalid JSON at offset 1"} {
		if msg, _ := got[i]["message"].(string); !strings.Contains(msg, want) || strings.Contains(msg, "Go ") {
			t.Errorf("reply %d says %q, want %q", i, msg, want)
		}
	}
	ready := got[0]["ui"].(map[string]any)
	if ready["status"] != "ok" || len(ready["nodes"].([]any)) == 0 || got[0]["timing"] == nil {
		t.Errorf("ready: %v", got[0])
	}
	if acts := f.actions(); len(acts) < 4 || strings.Join(acts[:4], " | ") != "save/tap | box/tap | name/setValue=Ada | list/scroll=up map[direction:up durationMs:300 endX:0.5 endY:0.5 length:0.4 startX:0.5 startY:0.6]" {
		t.Errorf("actions %q", acts)
	}
	batch := got[8]
	if results, _ := batch["results"].([]any); len(results) != 2 || batch["skippedIds"].([]any)[0] != "8c" {
		t.Errorf("batch: %v", batch)
	}

	// Tasks need a repository, which this CLI has none of: refused with a reason.
	got = replies(t, f, uiauto.InteractOptions{Repository: "/repo"}, `{"id":"t","command":"task","taskId":"login"}`)
	if got[1]["error"] != uiauto.InteractCommandFailed || !strings.Contains(got[1]["message"].(string), "not supported") {
		t.Errorf("task: %v", got[1])
	}
	// Typing with no target goes to the focused field; none is focused here.
	got = replies(t, f, uiauto.InteractOptions{}, `{"id":"k","command":"type","value":"x"}`)
	if got[1]["error"] != uiauto.InteractCommandFailed || !strings.Contains(got[1]["message"].(string), "no field has focus") {
		t.Errorf("type without focus: %v", got[1])
	}
}

// TestInteractBounds: a line over 65536 characters and nesting over 16 are refused, and
// the interaction goes on.
func TestInteractBounds(t *testing.T) {
	t.Parallel()
	long := `{"id":"x","command":"type","target":{"text":"Name"},"value":"` + strings.Repeat("a", 70000) + `"}`
	deep := `{"id":"d","command":"task","taskId":"t","input":` + strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat(`}`, 20) + `}`
	got := replies(t, &form{}, uiauto.InteractOptions{}, long, deep, `{"id":"s","command":"snapshot"}`)
	if len(got) != 4 || !strings.Contains(got[1]["message"].(string), "at most 65536 characters") ||
		!strings.Contains(got[2]["message"].(string), "nests at most 16") || got[3]["succeeded"] != true {
		t.Fatalf("%v", got)
	}
}

package mcpbridge

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/wire"
)

// bigResult is an object with an array of n records, about 100 bytes each.
func bigResult(n int) jsontext.Value {
	var b strings.Builder
	b.WriteString(`{"count":` + fmt.Sprint(n) + `,"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"index":%d,"title":"Record %d","text":"%s"}`, i, i, strings.Repeat("x", 60))
	}
	b.WriteString(`],"note":"` + strings.Repeat("long text ", 1000) + `"}`)
	return jsontext.Value(b.String())
}

// TestResultCap: a result over the cap is saved and replaced by a note, the answer stays
// under the cap (text and structured content both), and ansight_read_result pages through
// the saved result.
func TestResultCap(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	c := f.catalogs["s1"]
	big := bigResult(20000) // ~2 MB
	c.run["notes.list"] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return big, nil }
	dir := t.TempDir()
	h := newHarness(t, f, Options{ResultDir: dir, ExposeAppTools: "s1"})
	h.sync()

	res := h.call(ToolCallAppTool, map[string]any{"toolId": "notes.list"})
	var out callOutput
	answer := text(t, res, &out)
	whole, _ := json.Marshal(res)
	t.Logf("a %d-byte result: answer %d bytes, whole tools/call result %d bytes", len(big), len(answer), len(whole))
	tr := out.ResultTruncated
	if res.IsError || !out.Success || out.Result != nil || tr == nil || tr.SizeBytes != len(big) || !strings.HasPrefix(tr.Path, dir) {
		t.Fatalf("%s", answer)
	}
	if len(answer) > DefaultMaxResultBytes || len(whole) > 2*DefaultMaxResultBytes+1024 {
		t.Fatalf("answer %d bytes, whole %d", len(answer), len(whole))
	}
	if saved, err := os.ReadFile(tr.Path); err != nil || string(saved) != string(big) {
		t.Fatalf("saved file: %v", err)
	}
	if o, ok := tr.Outline.(map[string]any); !ok || o["count"] != float64(20000) || !strings.HasPrefix(o["items"].(string), "array of 20000 items") {
		t.Fatalf("outline: %#v", tr.Outline)
	}
	// The note's example names a member the outline shows: the first too large to show.
	if want := `{"resultId":"` + tr.ResultID + `","pointer":"/items"}`; !strings.Contains(tr.Note, want) {
		t.Errorf("note %q does not suggest %s", tr.Note, want)
	}

	read := func(args map[string]any) readResultOutput {
		t.Helper()
		args["resultId"] = tr.ResultID
		res := h.call(ToolReadResult, args)
		var r readResultOutput
		if s := text(t, res, &r); res.IsError || len(s) > DefaultMaxResultBytes {
			t.Fatalf("%v: %d bytes: %.300s", args, len(s), s)
		}
		return r
	}
	r := read(map[string]any{"pointer": "/items"})
	if r.Total != 20000 || len(r.Items) == 0 || r.NextOffset != len(r.Items) || r.Offset != 0 {
		t.Fatalf("first page: total %d, %d items, next %d", r.Total, len(r.Items), r.NextOffset)
	}
	r2 := read(map[string]any{"pointer": "/items", "offset": r.NextOffset, "maxBytes": 2048})
	if r2.Offset != r.NextOffset || len(r2.Items) == 0 || len(r2.Items) > 30 || !strings.Contains(string(r2.Items[0]), fmt.Sprintf(`"index":%d`, r.NextOffset)) {
		t.Fatalf("second page: %+v", r2)
	}
	if one := read(map[string]any{"pointer": "/items/17/title"}); string(one.Value) != `"Record 17"` {
		t.Fatalf("one member: %+v", one)
	}
	if s := read(map[string]any{"pointer": "/note", "maxBytes": 1024}); s.Text == nil || len(*s.Text) > 1024 || s.NextOffset == 0 || s.Total != 10000 {
		t.Fatalf("string slice: %+v", s)
	}
	if whole := read(map[string]any{}); whole.Outline == nil || whole.Value != nil || !strings.Contains(whole.Note, `(e.g. "/items")`) {
		t.Fatalf("the whole result is outlined, with a pointer to one of its members: %+v", whole)
	}
	for _, args := range []map[string]any{
		{"resultId": "result-20260101-000000-00000000"},
		{"resultId": "../etc/passwd"},
		{"resultId": tr.ResultID, "pointer": "/nope"},
		{"resultId": tr.ResultID, "pointer": "items"},
		{"resultId": tr.ResultID, "pointer": "/items/x"},
		{"resultId": tr.ResultID, "pointer": "/items/01"},
	} {
		if e := errorOf(t, h.call(ToolReadResult, args)); e.Code != wire.CodeResultNotFound && e.Code != wire.CodeArgumentsInvalid {
			t.Errorf("%v: %+v", args, e)
		}
	}

	// An exposed tool with an output schema cannot return a partial object: the call is a
	// tool error that says it succeeded and where the result is.
	e := errorOf(t, h.call("notes_list", nil))
	if e.Code != wire.CodeResultTooLarge || !strings.Contains(e.Message, "succeeded") || !strings.Contains(string(e.Details), `"resultId"`) {
		t.Fatalf("exposed: %+v", e)
	}
}

// TestResultCapEvidence: evidence over the cap goes too, larger first; a small result stays.
func TestResultCapEvidence(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	h := newHarness(t, f, Options{ResultDir: t.TempDir(), MaxResultBytes: 4096})
	big := bigResult(200)
	f.catalogs["s1"].run["notes.create"] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return jsontext.Value(`{"id":"n1"}`), nil }
	// The fake has no evidence; a batch of results shows the order instead.
	f.catalogs["s1"].run["notes.list"] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return big, nil }
	res := h.call(ToolCallAppTools, map[string]any{"calls": []any{
		map[string]any{"toolId": "notes.create"}, map[string]any{"toolId": "notes.list"}, map[string]any{"toolId": "notes.list"},
	}})
	var out batchOutput
	answer := text(t, res, &out)
	if len(answer) > 4096 || string(out.Results[0].Result) != `{"id":"n1"}` || out.Results[1].ResultTruncated == nil || out.Results[2].ResultTruncated == nil {
		t.Fatalf("%d bytes: %s", len(answer), answer)
	}
}

// TestSavedResultsArePruned: the result directory keeps the newest maxSavedResults files
// and leaves other files alone.
func TestSavedResultsArePruned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other := dir + "/keep.json"
	os.WriteFile(other, []byte("{}"), 0o600)
	s := &resultStore{dir: dir}
	var last string
	for range maxSavedResults + 5 {
		id, _, err := s.save(jsontext.Value(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		last = id
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != maxSavedResults+1 {
		t.Fatalf("%d files", len(entries))
	}
	if _, err := s.load(last); err != nil {
		t.Fatalf("the newest result: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("removed a file that is not a saved result")
	}
}

// TestEncodedOnce holds the answer built from fitCall's and fitBatch's encoding against
// the answer encoded afresh (appStructured), under the cap and over it (spilled).
func TestEncodedOnce(t *testing.T) {
	br := New(newFakeBackend(t), Options{ResultDir: t.TempDir(), MaxResultBytes: 8 << 10})
	for _, result := range []jsontext.Value{jsontext.Value(`{"a":"<b> é\u200b"}`), bigResult(200)} {
		out := callOutput{SessionID: "s", ToolID: "t", outcome: outcome{Success: true, Result: result, Evidence: jsontext.Value(`{"x":1}`)}}
		got, err := appStructuredEncoded(br.fitCall(&out), out, false)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := appStructured(out, false)
		if string(got.StructuredContent.(jsontext.Value)) != string(want.StructuredContent.(jsontext.Value)) ||
			got.Content[0].(*mcp.TextContent).Text != want.Content[0].(*mcp.TextContent).Text {
			t.Errorf("call answer differs:\n got %s\nwant %s", got.StructuredContent, want.StructuredContent)
		}
		batch := batchOutput{SessionID: "s", Success: true, Results: []batchItem{{Index: 0, outcome: out.outcome}, {Index: 1, outcome: outcome{Result: result}}}}
		gotB, _ := appStructuredEncoded(br.fitBatch(&batch), batch, false)
		wantB, _ := appStructured(batch, false)
		if string(gotB.StructuredContent.(jsontext.Value)) != string(wantB.StructuredContent.(jsontext.Value)) {
			t.Errorf("batch answer differs:\n got %s\nwant %s", gotB.StructuredContent, wantB.StructuredContent)
		}
	}
}

package flow

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// demoTraffic reads testdata/traffic/demo-records.json: the traffic records of a real demo
// session as GET /v1/sessions/{id}/records?kind=traffic answered (the demo's own
// walkthrough, then calls made with 'ansight app call' and 'app batch': a note created and
// read back by its id, a batch, a refused critical call, a tool error, UI actions on tree
// nodes, a screenshot).
func demoTraffic(t testing.TB) []Traffic {
	t.Helper()
	raw, err := os.ReadFile("testdata/traffic/demo-records.json")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Records []struct {
			At   time.Time      `json:"at"`
			Data jsontext.Value `json:"data"`
		} `json:"records"`
	}
	if err := json.Unmarshal(raw, &page, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	out := make([]Traffic, len(page.Records))
	for i, r := range page.Records {
		out[i] = Traffic{At: r.At, Data: r.Data}
	}
	return out
}

func TestRecordDemoTraffic(t *testing.T) {
	t.Parallel()
	traffic := demoTraffic(t)
	// From the first notes.create made with 'ansight app call' (the demo's walkthrough
	// before it is left out by time).
	var since time.Time
	creates := 0
	for _, tr := range traffic {
		if strings.Contains(string(tr.Data), `"type":"tool.call","requestId"`) && strings.Contains(string(tr.Data), `"toolIds":["notes.create"]`) {
			if creates++; creates == 2 {
				since = tr.At
			}
		}
	}
	text, n, err := Record(traffic, RecordOptions{Session: "com-ansight-demo-notes-001", AppID: "com.ansight.demo.notes", Since: since})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d steps:\n%s", n, text)
	f, err := Parse("recorded.yaml", text)
	if err != nil {
		t.Fatalf("the recorded flow does not load: %v", err)
	}
	if err := f.Check(nil, nil); err != nil {
		t.Fatal(err)
	}
	s := string(text)
	for _, want := range []string{
		"- call: \"notes.create\"\n    arguments: {\"title\": \"Groceries\", \"body\": \"milk\"}\n    save: create\n",
		`{path: "/id", matches: "^n[0-9]+$"}`,
		`{path: "/createdAtUtc", matches: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"}`,
		`{path: "/title", equals: "Groceries"}`,
		"- call: \"notes.get\"\n    arguments: {\"id\": \"${create.id}\"}",
		`{path: "/id", equals: "${create.id}"}`,
		`{"call": "notes.get", "arguments": {"id": "${create.id}"}}`,
		"- call: \"notes.delete_all\"\n    arguments: {}\n    expectError: {code: \"tool_policy_not_granted\"}",
		"expectError: {code: \"note_not_found\"}",
		`- type: {"automationId": "titleField", "value": "Shopping"}`,
		`- tap: {"automationId": "saveButton"}`,
		"- screenshot: screen-1",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the flow lacks %s", want)
		}
	}
	if strings.Contains(s, "ui.get_visual_tree") || strings.Contains(s, "n5") {
		t.Error("a tree capture or a literal id was recorded")
	}
	if f.Count() != n {
		t.Errorf("Count %d, Record said %d", f.Count(), n)
	}
}

func TestRecordOrigins(t *testing.T) {
	t.Parallel()
	rec := func(origin, tool, id string) []Traffic {
		o := ""
		if origin != "" {
			o = `,"origin":"` + origin + `"`
		}
		return []Traffic{
			{Data: jsontext.Value(`{"direction":"request","type":"tool.call","requestId":"` + id + `"` + o + `,"outcome":"ok","payload":{"toolId":"` + tool + `"}}`)},
			{Data: jsontext.Value(`{"direction":"response","type":"tool.result","requestId":"` + id + `","outcome":"ok","payload":{"toolId":"` + tool + `","success":true,"result":{"n":1}}}`)},
		}
	}
	var traffic []Traffic
	traffic = append(traffic, rec("cli", "a.cli", "1")...)
	traffic = append(traffic, rec("internal", "a.internal", "2")...)
	traffic = append(traffic, rec("mcp:claude-code#1f2e3d4c", "a.mcp", "3")...)
	traffic = append(traffic, rec("mcp:claude-code#99aa00bb", "b.mcp", "6")...)
	traffic = append(traffic, rec("mcp:claude-codex#12345678", "c.mcp", "7")...)
	traffic = append(traffic, rec("", "a.old", "4")...)
	traffic = append(traffic, rec("player", "a.player", "5")...)
	for _, tc := range []struct {
		origins []string
		want    string
	}{
		{nil, "a.cli a.mcp b.mcp c.mcp a.old a.player"},
		{[]string{"mcp:"}, "a.mcp b.mcp c.mcp"},
		{[]string{"mcp:claude-code", "cli"}, "a.cli a.mcp b.mcp"},
		{[]string{"mcp:claude-code#99aa00bb"}, "b.mcp"},
		{[]string{"internal"}, "a.internal"},
	} {
		t.Run(strings.Join(tc.origins, ","), func(t *testing.T) {
			t.Parallel()
			text, _, err := Record(traffic, RecordOptions{Origins: tc.origins})
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse("r.yaml", text)
			if err != nil {
				t.Fatal(err)
			}
			var tools []string
			for _, s := range f.Steps {
				tools = append(tools, s.Tool)
			}
			if got := strings.Join(tools, " "); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestRecordEscapes: a recorded string that holds "${" is written as a literal, never
// read back as a reference.
func TestRecordEscapes(t *testing.T) {
	t.Parallel()
	traffic := []Traffic{
		{Data: jsontext.Value(`{"direction":"request","type":"tool.call","requestId":"1","outcome":"ok","payload":{"toolId":"notes.create","arguments":{"title":"costs ${price}"}}}`)},
		{Data: jsontext.Value(`{"direction":"response","type":"tool.result","requestId":"1","outcome":"ok","payload":{"toolId":"notes.create","success":true,"result":{"title":"costs ${price}"}}}`)},
	}
	text, _, err := Record(traffic, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("r.yaml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	app := newFakeApp()
	if r := Run(t.Context(), f, app, Options{}); r.Status != StatusPassed {
		t.Fatalf("%+v\n%s", r.Failure, text)
	}
	if got := app.calls()[0]; got != `notes.create {"title":"costs ${price}"}` {
		t.Errorf("sent %s", got)
	}
}

// TestRecordedDemoReplays records the whole of a real demo session — the demo's own
// walkthrough (a ui.query_nodes, then a batch that taps the row it found by its node
// reference) and the calls made after it with the CLI — and replays the flow against a
// fresh demo app: node references, revisions and ids of that run must not reach it.
func TestRecordedDemoReplays(t *testing.T) {
	t.Parallel()
	text, n, err := Record(demoTraffic(t), RecordOptions{AppID: "com.ansight.demo.notes"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("recorded.yaml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if err := f.Check(nil, nil); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	// The one reference kept is a tap the app refused (a node id its tree never had).
	s := string(text)
	if strings.Count(s, `"snapshotId": "native:`) != 1 || !strings.Contains(s, `"nodeId": "add", "action": "tap"}`+"\n    expectError") ||
		strings.Contains(s, `"revision", equals`) || strings.Contains(s, "noteRow-n4") {
		t.Errorf("a node reference, a revision or an id of the recorded run was kept:\n%s", s)
	}
	if !strings.Contains(s, `- tap: {"automationId": "noteRow-${create.id}"}`) {
		t.Errorf("the walkthrough's tap on the row of the note it created is not a selector of that note:\n%s", s)
	}
	h := startDemoHost(t)
	r := Run(t.Context(), f, h.target(), Options{SessionID: h.session})
	if r.Status != StatusPassed {
		t.Fatalf("%d steps; %s: %+v\n%s", n, r.Status, r.Failure, text)
	}
}

// TestRecordSwipeAndCounters: a scroll on a node of the captured tree (what 'ansight ui
// swipe' sends) becomes a swipe step with its direction; a result that holds the same id
// twice (ui.inspect_node's snapshotId and reference) does not expect its own save, which
// no flow can read; revisions, which count the app's captures, and a file transfer's
// status, which races the call's answer, are not expected equal.
func TestRecordSwipeAndCounters(t *testing.T) {
	t.Parallel()
	call := func(id, tool, args, result string) []Traffic {
		return []Traffic{
			{Data: jsontext.Value(`{"direction":"request","type":"tool.call","requestId":"` + id + `","origin":"cli","outcome":"ok","payload":{"toolId":"` + tool + `","arguments":` + args + `}}`)},
			{Data: jsontext.Value(`{"direction":"response","type":"tool.result","requestId":"` + id + `","outcome":"ok","payload":{"toolId":"` + tool + `","success":true,"result":` + result + `}}`)},
		}
	}
	tree := `{"format":"ansight.native.visual-tree.compact.v2","snapshotId":"native:7:aa","revision":7,"types":["Screen","List"],
		"root":{"id":"s","typeId":0,"children":[{"id":"list.notes","typeId":1,"automationId":"notesList","role":"list","supportedActions":["scroll"]}]}}`
	var traffic []Traffic
	traffic = append(traffic, call("1", "ui.get_visual_tree", `{}`, tree)...)
	traffic = append(traffic, call("2", "ui.perform_action",
		`{"reference":{"source":"native","snapshotId":"native:7:aa","revision":7,"nodeId":"list.notes"},"action":"scroll","value":"down","options":{"direction":"down"}}`,
		`{"action":"scroll","reference":{"source":"native","snapshotId":"native:7:aa","revision":7,"nodeId":"list.notes"}}`)...)
	traffic = append(traffic, call("4", "files.generate", `{}`,
		`{"deliveryMode":"websocket-binary","wireProtocol":"asft/1","transferId":"t1","sizeBytes":10,"status":"complete"}`)...)
	traffic = append(traffic, call("3", "ui.inspect_node", `{"nodeId":"list.notes"}`,
		`{"snapshotId":"native:8:bb","revision":8,"reference":{"snapshotId":"native:8:bb","revision":8,"nodeId":"list.notes"}}`)...)
	text, n, err := Record(traffic, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("r.yaml", text)
	if err == nil {
		err = f.Check(nil, nil)
	}
	if err != nil {
		t.Fatalf("the recorded flow is not valid: %v\n%s", err, text)
	}
	s := string(text)
	for _, want := range []string{
		`- swipe: {"automationId": "notesList", "direction": "down"}`,
		`{path: "/revision", exists: true}`,
		`{path: "/reference/snapshotId", matches: "^\\S+$"}`,
		`{path: "/status", exists: true}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the flow lacks %s:\n%s", want, s)
		}
	}
	if n != 3 || strings.Contains(s, "native:7") || strings.Contains(s, "equals: 8") || strings.Contains(s, `"complete"`) {
		t.Errorf("%d steps:\n%s", n, s)
	}
}

// TestRecordFailedBatch: a batch one of whose calls failed is replayed, against the demo
// app, expecting that call's error, as the runner fails the step with it; its figures are
// not expected.
func TestRecordFailedBatch(t *testing.T) {
	t.Parallel()
	traffic := []Traffic{
		{Data: jsontext.Value(`{"direction":"request","type":"tool.batch","requestId":"1","outcome":"ok","payload":{"calls":[{"toolId":"notes.list"},{"toolId":"notes.get","arguments":{"id":"n404"}}],"continueOnError":true}}`)},
		{Data: jsontext.Value(`{"direction":"response","type":"tool.batch.result","requestId":"1","outcome":"ok","payload":{"success":false,"completed":2,"requested":2,"stoppedEarly":false,"results":[` +
			`{"toolId":"notes.list","success":true,"result":{"count":0},"index":0},{"toolId":"notes.get","success":false,"error":{"code":"note_not_found","message":"no"},"index":1}]}}`)},
	}
	text, _, err := Record(traffic, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "continueOnError: true\n    expectError: {code: \"note_not_found\"}\n") || strings.Contains(string(text), "expect:") {
		t.Fatalf("%s", text)
	}
	f, err := Parse("r.yaml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	h := startDemoHost(t)
	if r := Run(t.Context(), f, h.target(), Options{SessionID: h.session}); r.Status != StatusPassed {
		t.Fatalf("%+v\n%s", r.Failure, text)
	}
}

// TestRecordUIOperations: the host's records of a ui assert and wait (type ui.operation)
// become assert and wait steps with their selectors and parameters; one that failed
// expects its error; a selector no flow can say (a node id) is left out.
func TestRecordUIOperations(t *testing.T) {
	t.Parallel()
	op := func(outcome, code, payload string) Traffic {
		c := ""
		if code != "" {
			c = `,"errorCode":"` + code + `"`
		}
		return Traffic{Data: jsontext.Value(`{"direction":"request","type":"ui.operation","requestId":"ui-1","origin":"cli","outcome":"` + outcome + `"` + c + `,"payload":` + payload + `}`)}
	}
	traffic := []Traffic{
		op("ok", "", `{"operation":"wait","selector":{"text":"Saved","ancestorAutomationId":"banner"},"condition":"visible","timeoutMs":3000,"pollMs":200}`),
		op("ok", "", `{"operation":"wait","condition":"stable","stableSamples":4}`),
		op("ok", "", `{"operation":"assert","selector":{"automationId":"titleField"},"expectedValue":"Milk","expectedEnabled":true}`),
		op("error", "ui_assert_failed", `{"operation":"assert","selector":{"role":"listitem","index":1},"count":0}`),
		op("ok", "", `{"operation":"assert","selector":{"nodeId":"list.add"}}`),
		op("ok", "", `{"operation":"find","selector":{"text":"x"}}`),
	}
	text, n, err := Record(traffic, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("r.yaml", text)
	if err == nil {
		err = f.Check(nil, nil)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	want := `  - wait: {"text": "Saved", "ancestor": "banner", "condition": "visible", "timeout": "3000ms", "poll": "200ms"}
  - wait: {"condition": "stable", "stableSamples": 4}
  - assert: {"automationId": "titleField", "expectedValue": "Milk", "expectedEnabled": true}
  - assert: {"role": "listitem", "index": 1, "count": 0}
    expectError: {code: "ui_assert_failed"}
`
	if n != 4 || !strings.HasSuffix(string(text), "steps:\n"+want) {
		t.Errorf("%d steps:\n%s\nwant the steps:\n%s", n, text, want)
	}
}

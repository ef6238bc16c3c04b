package mcpbridge

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/flow"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// TestRecordFlow: ansight_record_flow answers the calls this MCP session made, as a flow
// that loads, and leaves out the calls of other clients — and of another session of the
// same client (two editor windows of one agent, both "test"), whose origin differs only by
// its session's tag.
func TestRecordFlow(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	f.recordCalls = true
	c := f.catalogs["s1"]
	c.run["notes.create"] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return jsontext.Value(`{"id":"n7"}`), nil }
	c.run["notes.get"] = func(args jsontext.Value) (jsontext.Value, *wire.Error) { return args, nil }
	f.traffic = []hostapi.Record{
		{Kind: hostapi.RecordTraffic, Data: jsontext.Value(`{"direction":"request","type":"tool.call","requestId":"cli1","origin":"cli","outcome":"ok","payload":{"toolId":"notes.list"}}`)},
		{Kind: hostapi.RecordTraffic, Data: jsontext.Value(`{"direction":"response","type":"tool.result","requestId":"cli1","outcome":"ok","payload":{"toolId":"notes.list","success":true,"result":{"notes":[]}}}`)},
	}
	br := New(f, Options{})
	agent, other := connect(t, f, br), connect(t, f, br)
	agent.call(ToolCallAppTool, map[string]any{"toolId": "notes.create", "arguments": map[string]any{"title": "from the agent"}})
	other.call(ToolCallAppTool, map[string]any{"toolId": "notes.get", "arguments": map[string]any{"id": "n9"}})
	agent.call(ToolCallAppTool, map[string]any{"toolId": "notes.get", "arguments": map[string]any{"id": "n7"}})

	res := agent.call(ToolRecordFlow, map[string]any{"name": "what the agent did"})
	var out recordFlowOutput
	text(t, res, &out)
	if res.IsError || !strings.HasPrefix(out.Origin, "mcp:test#") || out.Steps != 2 || out.SessionID != "s1" {
		t.Fatalf("%+v", out)
	}
	if strings.Contains(out.Flow, "notes.list") || strings.Contains(out.Flow, "n9") || !strings.Contains(out.Flow, `arguments: {"id": "${create.id}"}`) {
		t.Errorf("flow:\n%s", out.Flow)
	}
	fl, err := flow.Parse("agent.yaml", []byte(out.Flow))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.Flow)
	}
	if fl.Name != "what the agent did" || fl.AppID != "com.example.notes" {
		t.Errorf("flow %q for %q", fl.Name, fl.AppID)
	}
	var theirs recordFlowOutput
	text(t, other.call(ToolRecordFlow, nil), &theirs)
	if theirs.Origin == out.Origin || theirs.Steps != 1 || !strings.Contains(theirs.Flow, "n9") {
		t.Errorf("the other session's flow (%s, %d steps):\n%s", theirs.Origin, theirs.Steps, theirs.Flow)
	}
}

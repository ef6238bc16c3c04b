package mcpbridge

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/flow"
	"github.com/ansight-go/ansight/hostapi"
)

// TestRecordFlow: ansight_record_flow answers the calls this client (origin mcp:test) made,
// as a flow that loads, and leaves out the calls of other clients.
func TestRecordFlow(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	rec := func(origin, dir, typ, id, payload string) hostapi.Record {
		return hostapi.Record{Kind: hostapi.RecordTraffic, Data: jsontext.Value(`{"direction":"` + dir + `","type":"` + typ +
			`","requestId":"` + id + `","origin":"` + origin + `","outcome":"ok","payload":` + payload + `}`)}
	}
	f.traffic = []hostapi.Record{
		rec("mcp:test", "request", "tool.call", "1", `{"toolId":"notes.create","arguments":{"text":"from the agent"}}`),
		rec("mcp:test", "response", "tool.result", "1", `{"toolId":"notes.create","success":true,"result":{"id":"n7","text":"from the agent"}}`),
		rec("cli", "request", "tool.call", "2", `{"toolId":"notes.list"}`),
		rec("cli", "response", "tool.result", "2", `{"toolId":"notes.list","success":true,"result":{"notes":[]}}`),
		rec("mcp:test", "request", "tool.call", "3", `{"toolId":"notes.get","arguments":{"id":"n7"}}`),
		rec("mcp:test", "response", "tool.result", "3", `{"toolId":"notes.get","success":true,"result":{"id":"n7"}}`),
	}
	h := newHarness(t, f, Options{})
	res := h.call(ToolRecordFlow, map[string]any{"name": "what the agent did"})
	var out recordFlowOutput
	text(t, res, &out)
	if res.IsError || out.Origin != "mcp:test" || out.Steps != 2 || out.SessionID != "s1" {
		t.Fatalf("%+v", out)
	}
	if strings.Contains(out.Flow, "notes.list") || !strings.Contains(out.Flow, `arguments: {"id": "${create.id}"}`) {
		t.Errorf("flow:\n%s", out.Flow)
	}
	fl, err := flow.Parse("agent.yaml", []byte(out.Flow))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.Flow)
	}
	if fl.Name != "what the agent did" || fl.AppID != "com.example.notes" {
		t.Errorf("flow %q for %q", fl.Name, fl.AppID)
	}
}

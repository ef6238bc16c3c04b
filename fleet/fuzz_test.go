package fleet

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// FuzzHostRequest feeds any subject and body to a fleet host with a demo app connected,
// as NATS would deliver them. It must answer or refuse without panicking, and a call or
// batch it runs never has a tool above the class of its subject.
func FuzzHostRequest(f *testing.F) {
	f.Add("sessions", []byte(`{}`))
	f.Add("sessions", []byte(`{"ifRevision":"x"}`))
	f.Add("tools", []byte(`{"session":"com-ansight-demo-notes-001","tools":{"query":"note"}}`))
	f.Add("tool", []byte(`{"session":"com-ansight-demo-notes-001@a","toolId":"notes.create"}`))
	f.Add("call.read", []byte(`{"session":"com-ansight-demo-notes-001","call":{"toolId":"notes.list"}}`))
	f.Add("call.read", []byte(`{"session":"com-ansight-demo-notes-001","call":{"toolId":"notes.create","arguments":{"title":"x"}}}`))
	f.Add("call.write", []byte(`{"session":"com-ansight-demo-notes-001@b","call":{"toolId":"notes.create"}}`))
	f.Add("batch.write", []byte(`{"session":"com-ansight-demo-notes-001","batch":{"calls":[{"toolId":"notes.list"},{"toolId":"app.reset"}]}}`))
	f.Add("blob", []byte(`{"blob":"nope","offset":-1,"length":99999999999}`))
	f.Add("call.delete", []byte(`{}`))
	f.Add("tools", []byte(`{"session":"","tools":null}`))
	f.Add("call.read", []byte(`{"session":"com-ansight-demo-notes-001","call":{"toolId":"notes.list","timeoutMs":-5}}`))

	ns := startNATS(f, nil)
	h := startTestHost(f, testConfig(ns), "a")
	h.connectApp(notesApp)
	m := h.member
	f.Fuzz(func(t *testing.T, suffix string, body []byte) {
		subject := "ansight.lab.host.a." + suffix
		op, class, ok := m.subj.parseOp("a", subject)
		if !ok || op == opCancel || op == opPing {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		v, err := m.serve(ctx, op, class, &nats.Msg{Subject: subject, Reply: "_INBOX.fuzz", Data: body})
		if err != nil {
			return
		}
		if _, raw := v.([]byte); !raw {
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("answer does not encode: %v", err)
			}
		}
		var ran []string
		switch a := v.(type) {
		case callAnswer:
			if a.Call != nil && (a.Call.Success || a.Call.Error != nil && !a.Call.Error.RefusedByHost) {
				ran = []string{a.Call.ToolID}
			}
		case batchAnswer:
			if a.Batch != nil && a.Batch.Result != nil {
				for _, r := range a.Batch.Result.Results {
					ran = append(ran, r.ToolID)
				}
			}
		}
		if len(ran) == 0 {
			return
		}
		sess, _ := h.srv.Session(m.mustOwn(t, body))
		for _, id := range ran {
			if e := sess.Tools().Cached().Tool(id); e != nil && e.Policy.Rank() > class.Rank() {
				t.Fatalf("%s (%s) ran on the %s subject", id, e.Policy, class)
			}
		}
	})
}

// mustOwn is the host's session id a request that ran named.
func (m *Member) mustOwn(t *testing.T, body []byte) string {
	var req request
	if err := wire.Unmarshal(body, &req); err != nil {
		t.Fatalf("a request that ran does not decode: %v", err)
	}
	sid, err := m.own(req.Session)
	if err != nil {
		t.Fatalf("a request that ran names another host's session: %v", err)
	}
	return sid
}

// FuzzClientAnswer feeds any answer message to a fleet client, as a host (or anyone who
// may publish to its inbox) could send it, and any presence message. It must never panic,
// and only a well-formed final message ends a request without an error.
func FuzzClientAnswer(f *testing.F) {
	f.Add(kindResult, []byte(`{"call":{"schema":"ansight.app-call/v1","sessionId":"s","toolId":"t","success":true,"durationMs":1}}`))
	f.Add(kindError, []byte(`{"code":"policy_class_mismatch","message":"m","policy":"write"}`))
	f.Add(kindError, []byte(`{"code":""}`))
	f.Add(kindProgress, []byte(`{"transferId":"t","receivedBytes":5,"sizeBytes":10}`))
	f.Add(kindAlive, []byte(nil))
	f.Add(kindBlob, []byte(`{"id":"x","size":10}`))
	f.Add(kindBlob, []byte(`{"id":"x","size":-1}`))
	f.Add(kindBlob, []byte(`{"id":"x","size":1e300}`))
	f.Add("", []byte(`{}`))
	f.Add("presence", []byte(`{"schema":"ansight.fleet-presence/v1","host":"a","revision":"r","heartbeatMs":-1,"peers":["a","b.c",""]}`))
	f.Add("presence", []byte(`{"host":"x.y","leaving":true}`))

	ns := startNATS(f, nil)
	c := dialClient(f, testConfig(ns))
	f.Fuzz(func(t *testing.T, kind string, data []byte) {
		if kind == "presence" {
			c.onPresence(&nats.Msg{Data: data})
			for _, name := range c.dir.names() {
				if ValidName(name) != nil {
					t.Fatalf("the directory holds an invalid host name %q", name)
				}
			}
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		final, body, err := c.interpret(ctx, "a", "ansight.lab.host.a.call.read", &nats.Msg{Header: nats.Header{kindHeader: []string{kind}}, Data: data},
			func(hostapi.Progress) {})
		switch {
		case !final && (kind != kindAlive && kind != kindProgress):
			t.Fatalf("a %q message did not end the request", kind)
		case final && err == nil && kind != kindResult && kind != kindBlob:
			t.Fatalf("a %q message ended the request without an error", kind)
		case kind == kindResult && string(body) != string(data):
			t.Fatal("the result's body changed")
		}
	})
}

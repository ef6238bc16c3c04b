package hostile

import (
	"context"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// rawApp is an app written by hand, as an SDK other than ours (or a hostile one) may be:
// nothing on its side checks what it sends. It answers tool.query with its tools as a
// full catalog and tool.call with call.
type rawApp struct {
	appID, deviceName string
	// profile, when set, is sent as the device.profile payload after session.open.
	profile string
	tools   []wire.ToolEntry
	// call answers a tool.call payload with a response type and payload.
	call func(c wire.Call) (typ string, payload []byte)
}

// connectRaw enrolls a in local mode, upgrades, opens its session and serves it until the
// test ends. It returns the host's session.
func connectRaw(t *testing.T, h *testHost, a rawApp) (transport.Conn, *host.Session) {
	t.Helper()
	id := newIdentity(a.appID)
	req := id.enrollment()
	if a.deviceName != "" {
		req.DeviceName = a.deviceName
	}
	conn := h.enrollAndUpgrade(t, req)
	count := len(a.tools)
	catalog, err := wire.Marshal(wire.Catalog{Schema: wire.CatalogSchema, Revision: "sha256:raw", Tools: a.tools, Count: &count,
		AvailabilityRevision: "sha256:raw-a", EvaluatedAtUtc: time.Now(), TotalCount: &count, Categories: map[string]int{"raw": count}})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			_, msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			env, err := wire.DecodeEnvelope(msg)
			if err != nil {
				continue
			}
			typ, payload := "", []byte(nil)
			switch env.Type {
			case wire.TypeQuery:
				typ, payload = wire.TypeCatalog, catalog
			case wire.TypeCall:
				var c wire.Call
				if a.call == nil || wire.Unmarshal(env.Payload, &c) != nil {
					continue
				}
				typ, payload = a.call(c)
			case wire.TypeBatch:
				if typ, payload = a.batch(env.Payload); typ == "" {
					continue
				}
			default:
				continue
			}
			b, _ := wire.AppendEnvelope(nil, &wire.Envelope{Type: typ, ID: wire.ResponseID(env.ID), ReplyTo: env.ID,
				SessionID: env.SessionID, SentAt: time.Now(), Capability: wire.CapabilityToolExec, Payload: payload})
			conn.Write(context.Background(), transport.MessageText, b)
		}
	}()
	t.Cleanup(func() {
		conn.Close(transport.StatusNormalClosure, "")
		<-served
	})
	control := func(action, payload string) {
		b, _ := session.NewControlRequest(action, jsontext.Value(payload)).Marshal()
		if err := conn.Write(context.Background(), transport.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	control(session.ActionSessionOpen, `{"appId":`+quote(a.appID)+`}`)
	if a.profile != "" {
		control(session.ActionDeviceProfile, a.profile)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := h.WaitSession(ctx, func(s *host.Session) bool {
		in := s.Info()
		return in.AppID == a.appID && in.Opened && in.State == host.StateConnected && (a.profile == "" || in.Profile != nil)
	})
	if err != nil {
		t.Fatalf("the raw app's session never opened: %v", err)
	}
	return conn, s
}

// quote writes s as a JSON string.
func quote(s string) string {
	b, _ := jsontext.AppendQuote(nil, s)
	return string(b)
}

// batch answers a tool.batch payload by calling a.call for each item.
func (a rawApp) batch(payload []byte) (string, []byte) {
	var b wire.Batch
	if a.call == nil || wire.Unmarshal(payload, &b) != nil {
		return "", nil
	}
	res := wire.BatchResult{Success: true, Requested: len(b.Calls)}
	for i, raw := range b.Calls {
		var c wire.Call
		if wire.Unmarshal(raw, &c) != nil {
			return "", nil
		}
		item := wire.BatchItem{Index: i, Outcome: wire.Outcome{ToolID: c.ToolID}}
		typ, out := a.call(c)
		if typ == wire.TypeResult {
			var r wire.Result
			wire.Unmarshal(out, &r)
			item.Success, item.Message, item.Result = true, r.Message, r.Result
		} else {
			item.Error = new(wire.Error)
			wire.Unmarshal(out, item.Error)
			res.Success = false
		}
		res.Results = append(res.Results, item)
		res.Completed++
	}
	out, _ := wire.Marshal(res)
	return wire.TypeBatchResult, out
}

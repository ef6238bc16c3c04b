package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// Requests as the official SDKs write them (docs/protocol/session.md#control-channel).
const (
	openReq     = `{"type":"CONTROL_REQ","id":"client.00112233445566778899aabbccddeeff","replyTo":null,"action":"session.open","payload":{"clientName":"Pixel 8","configId":"local:com.example.app","appId":"com.example.app","openedAtUtc":"2026-07-30T01:00:00.000Z"},"success":true,"message":null}`
	stateReq    = `{"type":"CONTROL_REQ","id":"client.1","action":"app.state","payload":{"state":"Foreground","changedAtUtc":"2026-07-30T01:00:00Z"}}`
	completeReq = `{"type":"CONTROL_REQ","id":"client.2","action":"session.complete","payload":{"reason":"client log stream complete"},"success":true}`
	profileReq  = `{"type":"CONTROL_REQ","id":"client.3","action":"device.profile","payload":{"type":"DeviceAppProfile","schema":"ansight.device-app-profile.v1","sentAt":1785373200000,"reasonCode":1,"profileSeq":1,"sdk":{"name":"Ansight.Core","packageId":"Ansight.Core","version":"1.4.0","language":"csharp"},"device":{"model":"Pixel 8","osName":"Android","osVersion":"15","apiLevel":35,"cpuCoreCount":"eight","battery":{"level":0.5}},"app":{"appId":"com.example.app","versionCode":42,"processId":1234},"sessionJpegCaptureControlVersion":1}}`
)

func TestParseControlRequests(t *testing.T) {
	t.Parallel()
	e, err := ParseControl([]byte(openReq))
	if err != nil {
		t.Fatal(err)
	}
	var open SessionOpen
	if err := e.DecodePayload(&open); err != nil || open.ClientName != "Pixel 8" || open.ConfigID != "local:com.example.app" {
		t.Fatalf("session.open: %+v %v", open, err)
	}
	e, err = ParseControl([]byte(stateReq))
	if err != nil {
		t.Fatal(err)
	}
	var st AppState
	if err := e.DecodePayload(&st); err != nil || st.Normalized() != AppStateForeground {
		t.Fatalf("app.state: %+v %v", st, err)
	}
	e, err = ParseControl([]byte(profileReq))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseDeviceProfile(e.Payload)
	if err != nil {
		t.Fatal(err)
	}
	// cpuCoreCount has the wrong type and is skipped; its siblings survive.
	if p.SDK.Name != "Ansight.Core" || p.Device.Model != "Pixel 8" || p.Device.CPUCoreCount != 0 || p.App.ProcessID != 1234 || p.SessionJpegCaptureControlVersion != 1 {
		t.Fatalf("profile: %+v", p)
	}
}

func TestControlReplyBytes(t *testing.T) {
	t.Parallel()
	req, err := ParseControl([]byte(completeReq))
	if err != nil {
		t.Fatal(err)
	}
	b, err := req.Reply(true, "Session complete acknowledged.", nil).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"type":"CONTROL_RESP","id":null,"replyTo":"client.2","action":"session.complete","payload":null,"success":true,"message":"Session complete acknowledged."}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	b, _ = req.Reply(false, "", jsontext.Value(`{"sessionJpegCapture":{"mode":"app"}}`)).Marshal()
	const want2 = `{"type":"CONTROL_RESP","id":null,"replyTo":"client.2","action":"session.complete","payload":{"sessionJpegCapture":{"mode":"app"}},"success":false,"message":null}`
	if string(b) != want2 {
		t.Fatalf("got  %s\nwant %s", b, want2)
	}
	back, err := ParseControl(b)
	if err != nil || back.ReplyTo != "client.2" || back.Success {
		t.Fatalf("parse response: %+v %v", back, err)
	}
}

func TestNewControlRequest(t *testing.T) {
	t.Parallel()
	r := NewControlRequest(ActionClientLog, jsontext.Value(`{"data":"x"}`))
	if !strings.HasPrefix(r.ID, "client.") || len(r.ID) != len("client.")+32 {
		t.Fatalf("id %q", r.ID)
	}
	b, _ := r.Marshal()
	back, err := ParseControl(b)
	if err != nil || back.Action != ActionClientLog {
		t.Fatalf("%s: %v", b, err)
	}
	var log ClientLog
	if err := back.DecodePayload(&log); err != nil || log.Data != "x" {
		t.Fatalf("%+v %v", log, err)
	}
}

func TestParseControlMalformed(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"not json":       `{`,
		"no type":        `{"id":"a","action":"x"}`,
		"tool type":      `{"type":"tool.result","id":"a"}`,
		"req no id":      `{"type":"CONTROL_REQ","action":"x"}`,
		"req blank id":   `{"type":"CONTROL_REQ","id":" ","action":"x"}`,
		"req id number":  `{"type":"CONTROL_REQ","id":1,"action":"x"}`,
		"resp no reply":  `{"type":"CONTROL_RESP","id":null,"action":"x","success":true}`,
		"resp no succ":   `{"type":"CONTROL_RESP","replyTo":"a","action":"x"}`,
		"resp succ str":  `{"type":"CONTROL_RESP","replyTo":"a","action":"x","success":"true"}`,
		"resp no action": `{"type":"CONTROL_RESP","replyTo":"a","success":true}`,
		"dup":            `{"type":"CONTROL_REQ","id":"a","id":"b","action":"x"}`,
		"huge":           `{"type":"CONTROL_REQ","id":"a","action":"x","payload":{"p":"` + strings.Repeat("x", MaxControlBytes) + `"}}`,
	} {
		if _, err := ParseControl([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	// A request with an id but no usable action is still answerable by id, and so is one
	// the strict decoder refuses (duplicate or case-variant keys): the first id wins.
	for in, id := range map[string]string{
		`{"type":"CONTROL_REQ","id":"a","action":7}`:                       "a",
		`{"type":"CONTROL_REQ","id":"a","id":"b","action":"x"}`:            "a",
		`{"type":"CONTROL_REQ","id":"a","Action":"x","action":"x"}`:        "a",
		`{"x":[{"id":"no"}],"id":"c","type":"CONTROL_REQ","type":"other"}`: "c",
	} {
		e, err := ParseControl([]byte(in))
		if err == nil || e == nil || e.ID != id || e.Type != TypeControlRequest {
			t.Errorf("%s: %+v %v, want answerable by id %q", in, e, err, id)
		}
	}
	// Not answerable: not a request, no usable id, not JSON before the id.
	for _, in := range []string{
		`{"type":"CONTROL_RESP","id":"a","id":"b"}`,
		`{"type":"CONTROL_REQ","id":" ","id":"b"}`,
		`{"type":"CONTROL_REQ","id":"` + strings.Repeat("i", MaxControlIDLength+1) + `","x":1,"x":2}`,
		`{"type":"CONTROL_REQ",`,
	} {
		if e, err := ParseControl([]byte(in)); err == nil || e != nil {
			t.Errorf("%s: %+v %v, want no envelope", in, e, err)
		}
	}
}

func TestDecodePayloadTypes(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"array payload":  `{"type":"CONTROL_REQ","id":"a","action":"app.state","payload":[1]}`,
		"string payload": `{"type":"CONTROL_REQ","id":"a","action":"app.state","payload":"x"}`,
		"null payload":   `{"type":"CONTROL_REQ","id":"a","action":"app.state","payload":null}`,
		"no payload":     `{"type":"CONTROL_REQ","id":"a","action":"app.state"}`,
		"state number":   `{"type":"CONTROL_REQ","id":"a","action":"app.state","payload":{"state":1}}`,
	} {
		e, err := ParseControl([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var st AppState
		if err := e.DecodePayload(&st); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	if _, err := ParseDeviceProfile(jsontext.Value(`[1]`)); err == nil {
		t.Error("array profile accepted")
	}
}

// TestParseControlBudget: a request over its action's budget is refused with its id and
// action, read without decoding the payload; one within it parses.
func TestParseControlBudget(t *testing.T) {
	t.Parallel()
	req := func(action string, n int) []byte {
		return []byte(`{"type":"CONTROL_REQ","id":"big","action":"` + action + `","payload":{"data":"` + strings.Repeat("x", n) + `"}}`)
	}
	for _, tc := range []struct {
		action string
		n      int
		ok     bool
	}{
		{ActionClientLog, 512 << 10, true},
		{ActionClientLog, 1 << 20, false},
		{ActionClientLog, 20 << 20, false}, // above MaxControlBytes too
		{ActionAppState, 8 << 10, true},
		{ActionAppState, 16 << 10, false},
		{"shell.exec", 32 << 10, true},
		{"shell.exec", 64 << 10, false},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.action, tc.n), func(t *testing.T) {
			t.Parallel()
			e, err := ParseControl(req(tc.action, tc.n))
			if tc.ok {
				if err != nil {
					t.Errorf("%s of %d bytes: %v", tc.action, tc.n, err)
				}
				return
			}
			if !errors.Is(err, ErrMalformed) || e == nil || e.ID != "big" || e.Action != tc.action || !strings.Contains(err.Error(), "exceeds") {
				t.Errorf("%s of %d bytes: %+v %v, want a refusal answerable by id", tc.action, tc.n, e, err)
			}
		})
	}
}

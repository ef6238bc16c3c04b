package recording

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/redact"
	"github.com/ansight-go/ansight/wire"
)

// checkEntries holds for whatever a parser makes of any input: data is a JSON object or
// nothing, summaries are bounded, network records hold no credential header value.
func checkEntries(t *testing.T, es []entry) {
	t.Helper()
	for _, e := range es {
		if !e.kind.Valid() {
			t.Fatalf("kind %q", e.kind)
		}
		if e.data != nil && (!jsontext.Value(e.data).IsValid() || jsontext.Value(e.data).Kind() != '{') {
			t.Fatalf("%s data is not a JSON object: %q", e.kind, e.data)
		}
		if len(e.text) > maxTextBytes+len("…") {
			t.Fatalf("%s text of %d bytes", e.kind, len(e.text))
		}
		if e.kind == KindNetwork {
			obj, _ := members(e.data)
			for _, list := range []string{"requestHeaders", "responseHeaders"} {
				var hs []jsontext.Value
				if v := obj.get(list); v.Kind() == '[' && unmarshalChecked(v, &hs) == nil {
					for _, h := range hs {
						ho, _ := members(h)
						name, _ := str(ho.get("name"))
						value, _ := str(ho.get("value"))
						if redact.SensitiveHeader(name) && value != Redacted {
							t.Fatalf("stored %s: %q", name, value)
						}
					}
				}
			}
		}
	}
}

func FuzzParseText(f *testing.F) {
	for _, line := range officialLines(f) {
		f.Add(line)
	}
	f.Add([]byte(`{"type":"CLIENT_TOUCH_INPUT","schema":"ansight.touches.v1","rows":[[1e308,0,0,0,0],[-1,2,3],"x"]}`))
	f.Add([]byte(`{"type":"CLIENT_NETWORK_REQUEST","request":{"schema":"ansight.network-request.v1","requestHeaders":{"Cookie":"a"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEntries(t, parser{}.text(data, time.Unix(1, 0)))
	})
}

func FuzzParseControl(f *testing.F) {
	f.Add("client.log", []byte(`{"data":"level=WARN msg=x"}`), true)
	f.Add("crash.handoff", []byte(`{"reportId":"r","report":{"kind":"anr","occurredAtUtc":"2026-01-01T00:00:00Z"}}`), true)
	f.Add("device.profile", []byte(`{"type":"DeviceAppProfile","sdk":{"name":"x"}}`), true)
	f.Add("app.state", []byte(`{"state":"FOREGROUND"}`), false)
	f.Add("session.properties", []byte(`null`), true)
	f.Fuzz(func(t *testing.T, action string, payload []byte, ok bool) {
		// The host hands over payloads its control parser accepted: valid JSON.
		if len(payload) > 0 && !jsontext.Value(payload).IsValid() {
			return
		}
		checkEntries(t, parser{}.control(action, payload, ok, "m", time.Unix(1, 0)))
	})
}

func FuzzParseBinary(f *testing.F) {
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 60, Flags: 3, CapturedAt: time.Unix(5, 0), Width: 2, Height: 2, JPEG: []byte{0xff, 0xd8}})
	f.Add(frame)
	f.Add([]byte("ASJP"))
	f.Add([]byte("ASFT\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEntries(t, parser{}.binary(data, time.Unix(1, 0)))
	})
}

func TestDetectLevel(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]Level{
		`time=2026-01-01T00:00:00Z level=WARN msg=hi`: LevelWarn,
		`{"time":"x","level":"error","msg":"x"}`:      LevelError,
		`[Warning] something`:                         LevelWarn,
		`2026-01-01 10:00:00.123 DEBUG db: query`:     LevelDebug,
		`E/ActivityManager: crash`:                    LevelError,
		`FATAL: out of memory`:                        LevelError,
		`an error happened somewhere`:                 LevelInfo, // "error" is not at the start
		`plain line`:                                  LevelInfo,
	} {
		if got := detectLevel(line); got != want {
			t.Errorf("detectLevel(%q) = %v, want %v", line, got, want)
		}
	}
}

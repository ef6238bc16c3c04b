package hostile

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Terminal escapes: every string an app sends (device and app names, tool ids, names and
// descriptions, results, messages, errors, details) reaches the user's terminal through
// the human-readable output of the commands. None may reach it raw.

// evil writes the user's clipboard (OSC 52), clears the screen and homes the cursor,
// reverses the text direction, forges a line of our output and starts a C1 CSI sequence.
const evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[1;1H\u202eforged\nansight: fake line\u009b31m"

// terminalSafe reports the first character of out a terminal could act on: a control
// character other than the newlines our output is made of, a C1 control, or a Unicode
// character that reorders or breaks text.
func terminalSafe(out string) (bad rune, ok bool) {
	for _, r := range out {
		switch {
		case r == '\n':
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == utf8.RuneError,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
			return r, false
		}
	}
	return 0, true
}

// TestTerminalEscapes: an app whose every string carries terminal escapes is listed,
// shown and called through the commands. Their human output shows the strings escaped;
// their --json output carries them exactly.
func TestTerminalEscapes(t *testing.T) {
	h := newTestHost(t, nil)
	dir := serveControl(t, h)
	profile := `{"type":"DeviceAppProfile","schema":"ansight.device-app-profile.v1","sdk":{"name":` + quote(evil) + `,"version":"1"},` +
		`"device":{"osName":` + quote(evil) + `,"osVersion":"1"},"app":{"appId":"dev.ansight.terminal","appName":` + quote(evil) + `,"versionName":` + quote(evil) + `}}`
	entry := func(id string) wire.ToolEntry {
		return wire.ToolEntry{ID: id, Name: evil, Description: evil, Category: evil, Policy: wire.PolicyRead, Keywords: evil,
			ArgumentsSchema:    jsontext.Value(`{"type":"object","description":` + quote(evil) + `,"additionalProperties":true}`),
			DefinitionRevision: "sha256:" + id}
	}
	result, _ := wire.Marshal(wire.Result{ToolID: "raw.evil", Success: true, Message: evil, Result: jsontext.Value(`{"text":` + quote(evil) + `}`)})
	failure, _ := wire.Marshal(wire.Error{Code: "raw_failed" + evil, Message: evil, Details: jsontext.Value(`{"why":` + quote(evil) + `}`)})
	_, sess := connectRaw(t, h, rawApp{appID: "dev.ansight.terminal", deviceName: evil, profile: profile,
		tools: []wire.ToolEntry{entry("raw.evil"), entry("raw.fail"), entry("raw.\x1b[2Jid")},
		call: func(c wire.Call) (string, []byte) {
			if c.ToolID == "raw.fail" {
				return wire.TypeError, failure
			}
			return wire.TypeResult, result
		}})
	id := sess.ID()

	for _, args := range [][]string{
		{"session", "list"},
		{"session", "show", id},
		{"app", "tools", id},
		{"app", "tools", id, "--detail", "full"},
		{"app", "call", id, "raw.evil"},
		{"app", "call", id, "raw.fail"},
		{"app", "batch", id, "--continue-on-error", "--calls", `[{"toolId":"raw.evil"},{"toolId":"raw.fail"}]`},
		{"pairing", "list"},
	} {
		run := runCLI(t, dir, args...)
		out := run.stdout + run.stderr
		if r, ok := terminalSafe(out); !ok {
			t.Errorf("ansight %s wrote %U raw to the terminal:\n%q", strings.Join(args, " "), r, out)
		}
		if !strings.Contains(out, `\x1b]52;c;ZXZpbA==\a`) {
			t.Errorf("ansight %s does not show the app's string, escaped:\n%s", strings.Join(args, " "), out)
		}
	}

	run := runCLI(t, dir, "session", "list", "--json")
	var list struct {
		Sessions []struct {
			ID         string `json:"id"`
			DeviceName string `json:"deviceName"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].DeviceName != evil {
		t.Fatalf("session list --json does not carry the device name exactly: %v\n%s", err, run.stdout)
	}
	run = runCLI(t, dir, "app", "call", id, "raw.evil", "--json")
	var call struct { // ansight.app-call/v2: the tool's result at one level
		Message string `json:"message"`
		Result  struct {
			Text string `json:"text"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &call, json.RejectUnknownMembers(false)); err != nil || call.Message != evil || call.Result.Text != evil {
		t.Fatalf("app call --json does not carry the result exactly: %v\n%s", err, run.stdout)
	}
}

// TestTerminalEscapesInRecordings: what an app streams besides tool traffic — log lines,
// metric channel names, events, network requests, visual trees — carries the same escapes,
// and the browse commands show it escaped too, listed and followed alike.
func TestTerminalEscapesInRecordings(t *testing.T) {
	rec, err := recording.Open(recording.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	h := newTestHost(t, func(o *host.Options) { o.Recorder = rec })
	dir := serveControlWith(t, h, control.Options{Recorder: rec})
	conn, sess := connectRaw(t, h, rawApp{appID: "dev.ansight.terminal", deviceName: evil})
	q := quote(evil)
	for _, m := range []string{
		`{"type":"CLIENT_LOG","data":` + q + `}`,
		`{"type":"CLIENT_METRIC_CHANNELS","channels":[{"id":7,"name":` + q + `,"unit":` + q + `}]}`,
		`{"type":"CLIENT_METRICS","metrics":[{"channel":7,"value":1}]}`,
		`{"type":"CLIENT_EVENTS","events":[{"label":` + q + `,"eventType":` + q + `}]}`,
		`{"type":"CLIENT_NETWORK_REQUEST","request":{"schema":"ansight.network-request.v1","method":"GET","url":` + quote("https://x.test/"+evil) + `,"statusCode":200}}`,
		`{"type":"CLIENT_VISUAL_TREE","source":` + q + `,"snapshotId":` + q + `,"payload":{"root":{"id":"n1"}}}`,
	} {
		if err := conn.Write(context.Background(), transport.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	id := sess.ID()
	for i := 0; ; i++ { // the host's reader hands them to the recorder in order
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if c, _ := rec.Counts(context.Background(), id); c[recording.KindTree] == 1 {
			break
		}
		if i == 1000 {
			t.Fatal("the telemetry was not recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, args := range [][]string{
		{"session", "logs", id},
		{"session", "logs", id, "--tail", "1"},
		{"session", "metrics", id},
		{"session", "events", id},
		{"session", "network", id},
		{"session", "trees", id},
		{"session", "list", "--all"},
	} {
		run := runCLI(t, dir, args...)
		out := run.stdout + run.stderr
		if r, ok := terminalSafe(out); !ok {
			t.Errorf("ansight %s wrote %U raw to the terminal:\n%q", strings.Join(args, " "), r, out)
		}
		if !strings.Contains(out, `\x1b]52;c;ZXZpbA==\a`) {
			t.Errorf("ansight %s does not show the app's string, escaped:\n%s", strings.Join(args, " "), out)
		}
	}
	run := runCLI(t, dir, "session", "logs", id, "--json", "--search", "forged")
	var page struct {
		Records []struct {
			Text string `json:"text"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &page); err != nil || len(page.Records) != 1 || page.Records[0].Text != evil {
		t.Fatalf("session logs --json does not carry the line exactly: %v\n%s", err, run.stdout)
	}
}

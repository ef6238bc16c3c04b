package notes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// harness drives the app through App.Handle (package apptest).
type harness = apptest.Harness

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newApp registers a model on an app with the given guard.
func newApp(t *testing.T, opts Options, g catalog.Guard) (*harness, *Model) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = (&fixedClock{time.Date(2025, 3, 14, 9, 41, 0, 0, time.UTC)}).now
	}
	m := New(opts)
	a := app.New(app.Options{Guard: g})
	if err := m.Register(a); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a), m
}

func obj(t *testing.T, v jsontext.Value) map[string]any {
	t.Helper()
	var m map[string]any
	if err := wire.Unmarshal(v, &m); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	return m
}

var wantTools = map[string]wire.Policy{
	"ui.get_visual_tree": wire.PolicyRead, "ui.query_nodes": wire.PolicyRead, "ui.perform_action": wire.PolicyWrite,
	"ui.wait": wire.PolicyRead, "ui.get_screenshot": wire.PolicyRead, "ui.inspect_node": wire.PolicyRead,
	"ui.show_overlay": wire.PolicyWrite, "ui.update_overlay": wire.PolicyWrite, "ui.remove_overlay": wire.PolicyWrite,
	"ui.clear_overlays": wire.PolicyWrite, "ui.get_overlay": wire.PolicyRead, "ui.query_overlays": wire.PolicyRead,
	"notes.list": wire.PolicyRead, "notes.get": wire.PolicyRead, "notes.create": wire.PolicyWrite,
	"notes.update": wire.PolicyWrite, "notes.delete_all": wire.PolicyCritical,
	"settings.set_dark_mode": wire.PolicyWrite, "app.get_state": wire.PolicyRead, "app.reset": wire.PolicyCritical,
	"account.sign_in": wire.PolicyWrite, "account.sign_out": wire.PolicyWrite,
	"sync.status": wire.PolicyRead, "sync.push": wire.PolicyWrite,
	"data.large_result": wire.PolicyRead, "files.generate": wire.PolicyRead,
}

func TestCatalog(t *testing.T) {
	h, _ := newApp(t, Options{}, catalog.GuardFullAccess)
	r := h.Send(wire.TypeQuery, `{"detail":"full"}`)
	got := map[string]wire.ToolEntry{}
	for _, e := range r.Catalog.Tools {
		got[e.ID] = e
	}
	if len(got) != len(wantTools) {
		t.Errorf("%d tools, want %d", len(got), len(wantTools))
	}
	for id, p := range wantTools {
		e, ok := got[id]
		if !ok || e.Policy != p {
			t.Errorf("%s: registered %v, policy %s, want %s", id, ok, e.Policy, p)
			continue
		}
		// Every published schema compiles, so the runtime validates every call's arguments.
		for _, s := range []jsontext.Value{e.ArgumentsSchema, e.ResultSchema} {
			if _, err := schema.Compile(s); err != nil {
				t.Errorf("%s: %v\n%s", id, err, s)
			}
		}
	}
	// Availability depends on state: the sync tools are unavailable until sign-in.
	for _, id := range []string{"sync.status", "sync.push"} {
		e := got[id]
		rt := e.Runtime
		if rt == nil || rt.Available || rt.Code != CodeSyncAccountNotLoaded || rt.Reason == "" || rt.Remediation == "" ||
			rt.RequiredState != "account.signedIn" || !rt.Retryable || e.IsExecutable() {
			t.Errorf("%s runtime = %+v", id, rt)
		}
	}
	h.Call("account.sign_in", `{"userName":"ada"}`)
	r = h.Send(wire.TypeQuery, `{"detail":"full","ids":["sync.status","sync.push"]}`)
	for _, e := range r.Catalog.Tools {
		if !e.IsExecutable() {
			t.Errorf("%s not executable after sign-in: %+v", e.ID, e.Runtime)
		}
	}

	// The app's default guard (read/write) hides the critical tools.
	h, _ = newApp(t, Options{}, catalog.Guard{})
	r = h.Send(wire.TypeQuery, `{"detail":"index"}`)
	for _, e := range r.Catalog.Tools {
		if e.Policy == wire.PolicyCritical {
			t.Errorf("%s visible under the read/write guard", e.ID)
		}
	}
	if err := h.Fail("notes.delete_all", `{}`); err.Code != wire.CodeExecutionDenied {
		t.Errorf("delete_all under read/write = %v", err)
	}
}

func TestArgumentSchemas(t *testing.T) {
	h, _ := newApp(t, Options{}, catalog.GuardFullAccess)
	invalid := []struct{ tool, args string }{
		{"notes.list", `{"limit":0}`},
		{"notes.list", `{"limit":101}`},
		{"notes.list", `{"query":5}`},
		{"notes.list", `{"unknown":true}`},
		{"notes.get", `{}`},
		{"notes.get", `{"id":""}`},
		{"notes.create", `{"body":"no title"}`},
		{"notes.create", `{"title":""}`},
		{"notes.create", fmt.Sprintf(`{"title":%q}`, strings.Repeat("t", 201))},
		{"notes.update", `{"id":"n1"}`},
		{"notes.update", `{"title":"x"}`},
		{"notes.delete_all", `{"force":true}`},
		{"settings.set_dark_mode", `{}`},
		{"settings.set_dark_mode", `{"enabled":"yes"}`},
		{"account.sign_in", `{"userName":"with space"}`},
		{"account.sign_in", `{"userName":""}`},
		{"data.large_result", `{"sizeBytes":10}`},
		{"data.large_result", `{"sizeBytes":1073741824}`},
		{"files.generate", `{}`},
		{"files.generate", `{"sizeBytes":-1}`},
		{"files.generate", `{"sizeBytes":10,"pattern":"ones"}`},
		{"files.generate", `{"sizeBytes":10,"fileName":"../etc/passwd"}`},
		{"files.generate", `{"sizeBytes":10,"seed":-1}`},
	}
	for _, tt := range invalid {
		if err := h.Fail(tt.tool, tt.args); err.Code != wire.CodeArgumentsSchemaInvalid {
			t.Errorf("%s(%s) = %v, want %s", tt.tool, tt.args, err, wire.CodeArgumentsSchemaInvalid)
		}
	}
}

func TestNotesTools(t *testing.T) {
	h, m := newApp(t, Options{}, catalog.GuardFullAccess)
	res, _ := h.Call("notes.list", `{}`)
	list := obj(t, res)
	if list["count"] != 3.0 || list["total"] != 3.0 {
		t.Errorf("notes.list = %v", list)
	}
	res, _ = h.Call("notes.list", `{"limit":1,"query":"TALK"}`)
	if l := obj(t, res); l["count"] != 1.0 || l["notes"].([]any)[0].(map[string]any)["title"] != "Ideas for the talk" {
		t.Errorf("filtered = %v", l)
	}
	res, _ = h.Call("notes.create", `{"title":"  From a tool ","body":"Hello"}`)
	n := obj(t, res)
	if n["title"] != "From a tool" || n["id"] != "n4" || n["createdAtUtc"] != "2025-03-14T09:41:00Z" {
		t.Errorf("created = %v", n)
	}
	if got := rows(t, m); got[0] != "From a tool" {
		t.Errorf("the list screen does not show the new note first: %v", got)
	}
	res, _ = h.Call("notes.update", `{"id":"n4","body":"Changed"}`)
	if n := obj(t, res); n["title"] != "From a tool" || n["body"] != "Changed" {
		t.Errorf("updated = %v", n)
	}
	res, _ = h.Call("notes.get", `{"id":"n4"}`)
	if n := obj(t, res); n["body"] != "Changed" {
		t.Errorf("get = %v", n)
	}
	for _, c := range []struct{ tool, args string }{{"notes.get", `{"id":"n99"}`}, {"notes.update", `{"id":"n99","title":"x"}`}} {
		err := h.Fail(c.tool, c.args)
		if err.Code != CodeNoteNotFound || string(err.Details) != `{"id":"n99"}` {
			t.Errorf("%s: %v %s", c.tool, err, err.Details)
		}
	}
	res, _ = h.Call("notes.delete_all", `{}`)
	if d := obj(t, res); d["deleted"] != 4.0 || len(rows(t, m)) != 0 {
		t.Errorf("delete_all = %v", d)
	}
	res, _ = h.Call("settings.set_dark_mode", `{"enabled":true}`)
	if obj(t, res)["darkMode"] != true || !m.state().DarkMode {
		t.Error("dark mode not set")
	}
	res, _ = h.Call("app.get_state", `{}`)
	if s := obj(t, res); s["screen"] != "list" || s["darkMode"] != true || s["noteCount"] != 0.0 {
		t.Errorf("state = %v", s)
	}
	res, _ = h.Call("app.reset", `{}`)
	if s := obj(t, res); s["darkMode"] != false || s["noteCount"] != 3.0 {
		t.Errorf("after reset = %v", s)
	}
}

func TestSyncTools(t *testing.T) {
	h, m := newApp(t, Options{}, catalog.GuardFullAccess)
	for _, id := range []string{"sync.status", "sync.push"} {
		err := h.Fail(id, `{}`)
		if err.Code != CodeSyncAccountNotLoaded || !err.Retryable {
			t.Errorf("%s before sign-in: %+v", id, err)
		}
		d := obj(t, err.Details)
		if d["available"] != false || d["code"] != string(CodeSyncAccountNotLoaded) || d["remediation"] == nil || d["requiredState"] != "account.signedIn" {
			t.Errorf("%s details = %v", id, d)
		}
	}
	res, _ := h.Call("account.sign_in", `{"userName":"ada"}`)
	if a := obj(t, res); a["account"] != "ada" || a["signedIn"] != true || a["pendingChanges"] != 3.0 {
		t.Errorf("sign_in = %v", a)
	}
	res, _ = h.Call("sync.status", `{}`)
	if s := obj(t, res); s["account"] != "ada" || s["pendingChanges"] != 3.0 || s["syncing"] != false || s["lastSyncUtc"] != nil {
		t.Errorf("status = %v", s)
	}
	res, _ = h.Call("sync.push", `{}`)
	if p := obj(t, res); p["pushed"] != 3.0 || p["account"] != "ada" || p["syncedAtUtc"] != "2025-03-14T09:41:00Z" {
		t.Errorf("push = %v", p)
	}
	if !strings.HasPrefix(m.state().Status, "Synced 3 notes") {
		t.Errorf("status line = %q", m.state().Status)
	}
	res, _ = h.Call("account.sign_out", `{}`)
	if a := obj(t, res); a["signedIn"] != false {
		t.Errorf("sign_out = %v", a)
	}
	if err := h.Fail("sync.push", `{}`); err.Code != CodeSyncAccountNotLoaded {
		t.Errorf("push after sign-out = %v", err)
	}
}

// TestUIToolsDriveTheApp walks the app through the standard UI tools only, as an agent
// would.
func TestUIToolsDriveTheApp(t *testing.T) {
	h, m := newApp(t, Options{}, catalog.GuardFullAccess)
	ref := func(filter string) string {
		t.Helper()
		res, _ := h.Call("ui.query_nodes", filter)
		var q struct {
			Matches []struct {
				Reference jsontext.Value `json:"reference"`
			} `json:"matches"`
		}
		if err := wire.Unmarshal(res, &q); err != nil || len(q.Matches) != 1 {
			t.Fatalf("query %s: %s", filter, res)
		}
		return string(q.Matches[0].Reference)
	}
	perform := func(reference, action, value string) map[string]any {
		t.Helper()
		args := fmt.Sprintf(`{"reference":%s,"action":%q`, reference, action)
		if value != "" {
			args += `,"value":` + value
		}
		res, _ := h.Call("ui.perform_action", args+"}")
		return obj(t, res)
	}

	addRef := ref(`{"automationId":"addNoteButton"}`)
	if out := perform(addRef, "tap", ""); out["screen"] != "editor" {
		t.Errorf("tap Add note = %v", out)
	}
	// The screen changed and was captured again: the old reference is stale.
	title := ref(`{"role":"textbox","textContains":"title"}`)
	err := h.Fail("ui.perform_action", fmt.Sprintf(`{"reference":%s,"action":"tap"}`, addRef))
	if err.Code != wire.CodeStaleNodeReference {
		t.Errorf("old reference = %v", err)
	}
	perform(title, "typeText", `"Written by an agent"`)
	save := ref(`{"automationId":"saveButton","enabled":true}`)
	perform(save, "tap", "")
	if got := rows(t, m); got[0] != "Written by an agent" {
		t.Errorf("rows = %v", got)
	}

	// A reference to a node that left the screen without a new capture: the screen
	// reports it gone, and the toolkit answers stale_node_reference.
	toggle := ref(`{"role":"switch"}`)
	act(t, m, "list.add", ui.ActionTap, nil)
	err = h.Fail("ui.perform_action", fmt.Sprintf(`{"reference":%s,"action":"toggle"}`, toggle))
	if d := obj(t, err.Details); err.Code != wire.CodeStaleNodeReference || d["reason"] != "node_gone" {
		t.Errorf("gone node = %v %v", err, d)
	}

	res, r := h.Call("ui.get_screenshot", `{}`)
	shot := obj(t, res)
	data := r.Artifacts[shot["transferId"].(string)]
	img, err2 := png.Decode(bytes.NewReader(data))
	if err2 != nil || img.Bounds().Dx() != 390 || img.Bounds().Dy() != 844 || shot["width"] != 390.0 || shot["height"] != 844.0 {
		t.Errorf("screenshot %v: %v %v", shot, img.Bounds(), err2)
	}
	if shot["fileName"] != "screenshot-20250314-094100000.png" {
		t.Errorf("fileName = %v", shot["fileName"])
	}
}

func TestWaitForSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, m := newApp(t, Options{Now: time.Now}, catalog.GuardFullAccess)
		m.signIn("ada")
		act(t, m, "list.sync", ui.ActionTap, nil)
		res, _ := h.Call("ui.wait", `{"condition":"exists","automationId":"statusLabel","textContains":"synced 3 notes","pollMilliseconds":250}`)
		w := obj(t, res)
		if w["matched"] != true || w["elapsedMilliseconds"] != 1000.0 {
			t.Errorf("wait = %v", w)
		}
		err := h.Fail("ui.wait", `{"condition":"enabled","automationId":"saveButton","timeoutMilliseconds":300}`)
		if err.Code != wire.CodeUIWaitTimeout {
			t.Errorf("waiting for a node of the other screen = %v", err)
		}
	})
}

func TestSyntheticTools(t *testing.T) {
	h, _ := newApp(t, Options{SyntheticTools: 1000}, catalog.GuardReadOnly)
	r := h.Send(wire.TypeQuery, `{"detail":"index","query":"bench.synthetic"}`)
	if r.Catalog.TotalCount == nil || *r.Catalog.TotalCount < 1000 {
		t.Fatalf("catalog: %d tools listed", len(r.Catalog.Tools))
	}
	res, _ := h.Call("bench.synthetic_00042", `{"value":"x"}`)
	if e := obj(t, res); e["tool"] != "bench.synthetic_00042" || e["value"] != "x" {
		t.Errorf("echo = %v", e)
	}
	if err := New(Options{SyntheticTools: -1}).Register(app.New(app.Options{})); err == nil {
		t.Error("a negative tool count was accepted")
	}
}

func TestLargeResult(t *testing.T) {
	h, _ := newApp(t, Options{}, catalog.GuardReadOnly)
	res, _ := h.Call("data.large_result", `{}`)
	if len(res) < 1<<20 {
		t.Errorf("result is %d bytes, want at least 1 MiB", len(res))
	}
	var l struct {
		Count int `json:"count"`
		Items []struct {
			Index int `json:"index"`
		} `json:"items"`
	}
	if err := wire.Unmarshal(res, &l); err != nil || l.Count != len(l.Items) || l.Items[l.Count-1].Index != l.Count-1 {
		t.Errorf("large result: count %d, %d items, %v", l.Count, len(l.Items), err)
	}
	// On the wire the payload is gzip-wrapped and much smaller.
	raw := h.Send(wire.TypeCall, `{"toolId":"data.large_result","arguments":{"sizeBytes":2097152}}`).Payload
	if !bytes.Contains(raw, []byte(`"$ansightEncoding":"gzip-base64-json"`)) || len(raw) > 1<<18 {
		t.Errorf("payload of %d bytes, wrapped: %v", len(raw), bytes.Contains(raw, []byte("$ansightEncoding")))
	}
}

func TestGenerateFile(t *testing.T) {
	h, _ := newApp(t, Options{}, catalog.GuardReadOnly)
	random := func(seed uint64, n int) []byte {
		var s [32]byte
		binary.LittleEndian.PutUint64(s[:], seed)
		b := make([]byte, n)
		_, _ = rand.NewChaCha8(s).Read(b)
		return b
	}
	sequence := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i % 251)
		}
		return b
	}
	tests := []struct {
		args, name string
		want       []byte
	}{
		{`{"sizeBytes":200000}`, "generated-200000.bin", sequence(200000)},
		{`{"sizeBytes":70000,"pattern":"zeros","fileName":"z.bin"}`, "z.bin", make([]byte, 70000)},
		{`{"sizeBytes":65536,"pattern":"random","seed":7}`, "generated-65536.bin", random(7, 65536)},
		{`{"sizeBytes":0}`, "generated-0.bin", []byte{}},
	}
	for _, tt := range tests {
		res, r := h.Call("files.generate", tt.args)
		d := obj(t, res)
		got := r.Artifacts[d["transferId"].(string)]
		if d["fileName"] != tt.name || d["sizeBytes"] != float64(len(tt.want)) || d["mimeType"] != "application/octet-stream" ||
			d["deliveryMode"] != "websocket_binary" || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: %v, %d bytes received", tt.args, d, len(got))
		}
	}
}

func TestPatternReaderStreams(t *testing.T) {
	// The reader yields exactly size bytes in whatever pieces it is asked for, without
	// holding the file.
	r := newPatternReader("sequence", 1, 1000)
	var got []byte
	buf := make([]byte, 333)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if len(got) != 1000 || got[251] != 0 || got[999] != byte(999%251) {
		t.Errorf("read %d bytes", len(got))
	}
}

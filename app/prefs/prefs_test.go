package prefs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/prefs"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

var pinnedNow = time.Date(2026, 8, 25, 9, 30, 0, 0, time.UTC)

func harness(t *testing.T, opts prefs.Options) *apptest.Harness {
	t.Helper()
	a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }, Guard: catalog.GuardFullAccess})
	if err := prefs.Register(a, opts); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

func open(t *testing.T, content string) *prefs.FileStore {
	t.Helper()
	p := filepath.Join(t.TempDir(), "settings.json")
	if content != "" {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := prefs.OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestPrefs(t *testing.T) {
	t.Parallel()
	st := open(t, `{"theme":"dark","fontSize":14,"ratio":1.5,"recent":["a","b"],"sync":true,"weird":{"x":1},"app.secret":"s"}`)
	h := harness(t, prefs.Options{Stores: map[string]prefs.Store{"settings": st}, AllowKeyPrefixes: []string{"theme", "font", "ratio", "recent", "sync", "weird", "new", "n"}})

	v, _ := h.Call(prefs.ListKeysToolID, `{}`)
	if !strings.Contains(string(v), `"keys":["fontSize","ratio","recent","sync","theme","weird"],"truncated":false`) || !strings.Contains(string(v), `"store":"settings"`) {
		t.Errorf("list = %s", v)
	}
	if v, _ := h.Call(prefs.ListKeysToolID, `{"prefix":"r","maxResults":"1","store":"SETTINGS"}`); !strings.Contains(string(v), `"keys":["ratio"],"truncated":true`) {
		t.Errorf("list with a prefix = %s", v)
	}
	for key, want := range map[string]string{
		"theme": `"value":"dark","valueType":"string"`, "fontSize": `"value":"14","valueType":"integer"`,
		"ratio": `"value":"1.5","valueType":"number"`, "recent": `"value":"[\"a\",\"b\"]","valueType":"string_array"`,
		"sync": `"value":"true","valueType":"boolean"`, "weird": `"value":"{\"x\":1}","valueType":"unsupported"`,
		"nope": `"exists":false,"value":null,"valueType":null`,
	} {
		if v, _ := h.Call(prefs.GetValueToolID, `{"key":"`+key+`"}`); !strings.Contains(string(v), want) {
			t.Errorf("get %s = %s, want %s", key, v, want)
		}
	}
	for _, tc := range []struct{ args, back string }{
		{`{"key":"new.s","value":" hello ","valueType":"string"}`, `"value":"hello","valueType":"string"`},
		{`{"key":"new.b","value":"False","valueType":"BOOLEAN"}`, `"value":"false","valueType":"boolean"`},
		{`{"key":"new.i","value":"-9007199254740993","valueType":"integer"}`, `"value":"-9007199254740993","valueType":"integer"`},
		{`{"key":"new.n","value":"2","valueType":"number"}`, `"value":"2","valueType":"number"`},
		{`{"key":"new.e","value":"1e21","valueType":"number"}`, `"value":"1E+21","valueType":"number"`},
		{`{"key":"new.a","value":"[\"x\",\"é\"]","valueType":"string_array"}`, `"value":"[\"x\",\"é\"]","valueType":"string_array"`},
	} {
		v, _ := h.Call(prefs.SetValueToolID, tc.args)
		if !strings.Contains(string(v), `"updated":true`) {
			t.Errorf("set %s = %s", tc.args, v)
		}
		key := tc.args[8 : strings.Index(tc.args[8:], `"`)+8]
		if got, _ := h.Call(prefs.GetValueToolID, `{"key":"`+key+`"}`); !strings.Contains(string(got), tc.back) {
			t.Errorf("after set %s: %s, want %s", tc.args, got, tc.back)
		}
	}
	// The file holds each type so that it reads back as that type.
	b, _ := os.ReadFile(st.Path())
	if !strings.Contains(string(b), `"new.n": 2.0`) || !strings.Contains(string(b), `"new.i": -9007199254740993`) {
		t.Errorf("the file:\n%s", b)
	}
	if v, _ := h.Call(prefs.RemoveKeyToolID, `{"key":"new.s"}`); !strings.Contains(string(v), `"removed":true`) {
		t.Errorf("remove = %s", v)
	}
	if v, _ := h.Call(prefs.RemoveKeyToolID, `{"key":"new.s"}`); !strings.Contains(string(v), `"removed":false`) {
		t.Errorf("remove again = %s", v)
	}
	for _, tc := range []struct {
		tool string
		code wire.Code
		args string
	}{
		{prefs.GetValueToolID, prefs.CodeGetFailed, `{"key":"app.secret"}`}, // not allowed
		{prefs.GetValueToolID, prefs.CodeGetFailed, `{}`},
		{prefs.GetValueToolID, prefs.CodeGetFailed, `{"key":"theme","store":"other"}`},
		{prefs.SetValueToolID, prefs.CodeSetFailed, `{"key":"new.x","value":"","valueType":"string"}`},
		{prefs.SetValueToolID, prefs.CodeSetFailed, `{"key":"new.x","value":"yes","valueType":"boolean"}`},
		{prefs.SetValueToolID, prefs.CodeSetFailed, `{"key":"new.x","value":"1.5","valueType":"integer"}`},
		{prefs.SetValueToolID, prefs.CodeSetFailed, `{"key":"new.x","value":"Inf","valueType":"number"}`},
		{prefs.SetValueToolID, prefs.CodeSetFailed, `{"key":"new.x","value":"[1]","valueType":"string_array"}`},
		{prefs.SetValueToolID, prefs.CodeSetFailed, `{"key":"new.x","value":"x","valueType":"date"}`},
		{prefs.RemoveKeyToolID, prefs.CodeRemoveFailed, `{"key":"app.secret"}`},
		{prefs.ListKeysToolID, prefs.CodeListFailed, `{"maxResults":"many"}`},
	} {
		if e := h.Fail(tc.tool, tc.args); e.Code != tc.code {
			t.Errorf("%s %s = %v, want %s", tc.tool, tc.args, e, tc.code)
		}
	}
	if v, _ := h.Call(prefs.GetValueToolID, `{"key":"theme"}`); !strings.Contains(string(v), `"value":"dark"`) {
		t.Errorf("theme changed: %s", v)
	}
}

func TestPolicies(t *testing.T) {
	t.Parallel()
	a := app.New(app.Options{})
	if err := prefs.Register(a, prefs.Options{Stores: map[string]prefs.Store{"s": open(t, "")}}); err != nil {
		t.Fatal(err)
	}
	r := apptest.New(t, a).Send(wire.TypeQuery, `{"detail":"index"}`)
	got := map[string]wire.Policy{}
	for _, e := range r.Catalog.Tools {
		got[e.ID] = e.Policy
	}
	// prefs.remove_key is critical: the default guard does not publish it.
	if len(got) != 3 || got[prefs.ListKeysToolID] != wire.PolicyRead || got[prefs.GetValueToolID] != wire.PolicyRead || got[prefs.SetValueToolID] != wire.PolicyWrite {
		t.Errorf("tools = %v", got)
	}
	for name, opts := range map[string]prefs.Options{
		"no stores":                {},
		"two, no default":          {Stores: map[string]prefs.Store{"a": open(t, ""), "b": open(t, "")}},
		"an unknown default":       {Stores: map[string]prefs.Store{"a": open(t, "")}, Default: "b"},
		"a name that is not plain": {Stores: map[string]prefs.Store{"a b": open(t, "")}},
	} {
		if err := prefs.Register(app.New(app.Options{}), opts); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	if _, err := prefs.OpenFile(filepath.Join(t.TempDir(), "x")); err != nil {
		t.Errorf("a file that does not exist yet: %v", err)
	}
	p := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(p, []byte(`[1]`), 0o600)
	if _, err := prefs.OpenFile(p); err == nil {
		t.Error("a file that is not an object was opened")
	}
}

package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

func TestDefinitionCheck(t *testing.T) {
	t.Parallel()
	good := def("ui.perform_action", wire.PolicyWrite, "ui")
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(d *Definition)
		want string
	}{
		{"empty id", func(d *Definition) { d.ID = "" }, "id is empty"},
		{"space in id", func(d *Definition) { d.ID = "ui.perform action" }, "contains ' '"},
		{"leading dot", func(d *Definition) { d.ID = ".ui" }, "empty dotted segment"},
		{"double dot", func(d *Definition) { d.ID = "ui..x" }, "empty dotted segment"},
		{"trailing dot", func(d *Definition) { d.ID = "ui." }, "empty dotted segment"},
		{"non-ASCII id", func(d *Definition) { d.ID = "ui.café" }, "contains"},
		{"long id", func(d *Definition) { d.ID = strings.Repeat("a", MaxIDLength+1) }, "at most 128"},
		{"blank name", func(d *Definition) { d.Name = " " }, "name is empty"},
		{"empty description", func(d *Definition) { d.Description = "" }, "description is empty"},
		{"empty category", func(d *Definition) { d.Category = "" }, "category is empty"},
		{"invalid UTF-8", func(d *Definition) { d.Keywords = "\xff" }, "keywords is not valid UTF-8"},
		{"policy", func(d *Definition) { d.Policy = "delete" }, `policy "delete"`},
		{"encoding", func(d *Definition) { d.ArgumentEncoding = "xml" }, `argumentEncoding "xml"`},
		{"missing arguments schema", func(d *Definition) { d.ArgumentsSchema = nil }, "argumentsSchema: schema is missing"},
		{"arguments not an object", func(d *Definition) { d.ArgumentsSchema = jsontext.Value(`{"type":"string"}`) }, "must be an object schema"},
		{"broken result schema", func(d *Definition) { d.ResultSchema = jsontext.Value(`{"type":1}`) }, "resultSchema"},
		{"missing result schema", func(d *Definition) { d.ResultSchema = nil }, "resultSchema: schema is missing"},
		{"bad prerequisite", func(d *Definition) { d.PrerequisiteToolIDs = []string{"a b"} }, "prerequisiteToolIds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := good
			tc.edit(&d)
			err := d.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check() = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	// All problems are reported at once.
	bad := Definition{}
	if err := bad.Check(); err == nil || strings.Count(err.Error(), "\n") < 5 {
		t.Fatalf("Check() of an empty definition = %v", err)
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		g                 Guard
		visible, runnable string // policies
	}{
		{GuardDisabled, "", ""},
		{GuardReadOnly, "read", "read"},
		{GuardReadWrite, "read,write", "read,write"},
		{GuardFullAccess, "read,write,critical", "read,write,critical"},
		{Guard{DiscoveryEnabled: true, MaxPolicy: wire.PolicyWrite}, "read,write", ""},
		{Guard{ExecutionEnabled: true, MaxPolicy: wire.PolicyRead}, "", "read"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%+v", tc.g), func(t *testing.T) {
			t.Parallel()
			var vis, run []string
			for _, p := range []wire.Policy{wire.PolicyRead, wire.PolicyWrite, wire.PolicyCritical, "bogus"} {
				if tc.g.Visible(p) {
					vis = append(vis, string(p))
				}
				if tc.g.Executable(p) {
					run = append(run, string(p))
				}
			}
			if strings.Join(vis, ",") != tc.visible || strings.Join(run, ",") != tc.runnable {
				t.Errorf("%+v: visible %v executable %v", tc.g, vis, run)
			}
			if err := tc.g.Check(); err != nil {
				t.Errorf("%+v: %v", tc.g, err)
			}
		})
	}
	if err := (Guard{}).Check(); err == nil {
		t.Error("zero guard accepted")
	}
}

func TestNewSet(t *testing.T) {
	t.Parallel()
	defs := fixtureDefs()
	if _, err := NewSet(append(defs, defs[0]), GuardReadOnly); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := NewSet(defs, Guard{DiscoveryEnabled: true, MaxPolicy: "admin"}); err == nil {
		t.Fatal("invalid guard accepted")
	}
	broken := def("x.y", wire.PolicyRead, "")
	if _, err := NewSet([]Definition{broken}, GuardReadOnly); err == nil {
		t.Fatal("invalid definition accepted")
	}

	s := mustSet(t, defs, GuardReadOnly)
	// The Set owns its copy.
	defs[4].PrerequisiteToolIDs[0] = "mutated"
	defs[4].ArgumentsSchema[0] = ' '
	tool, ok := s.Lookup("map.capture")
	if !ok || strings.Join(tool.Def.PrerequisiteToolIDs, ",") != "map.load,route.open" || tool.Def.ArgumentsSchema[0] != '{' {
		t.Fatalf("Lookup = %+v, %v", tool, ok)
	}
	if _, ok := s.Lookup("notes.delete"); !ok {
		t.Fatal("Lookup misses hidden tools")
	}
	if _, ok := s.Lookup("Map.Capture"); ok {
		t.Fatal("Lookup is not case-sensitive")
	}
	var vis []string
	for _, t := range s.Visible() {
		vis = append(vis, t.Def.ID)
	}
	if strings.Join(vis, ",") != "map.capture,notes.list,route.open" || len(s.Tools()) != 5 {
		t.Fatalf("visible %v, tools %d", vis, len(s.Tools()))
	}

	w, err := s.WithGuard(GuardFullAccess)
	if err != nil {
		t.Fatal(err)
	}
	fresh := mustSet(t, fixtureDefs(), GuardFullAccess)
	if w.Revision() != fresh.Revision() || w.Revision() == s.Revision() || w.Guard() != GuardFullAccess {
		t.Fatal("WithGuard revision differs from a fresh Set's")
	}
	if _, err := s.WithGuard(Guard{}); err == nil {
		t.Fatal("WithGuard accepted an invalid guard")
	}
	// The guard is part of the revision even when it changes nothing visible.
	noExec := mustSet(t, fixtureDefs(), Guard{DiscoveryEnabled: true, MaxPolicy: wire.PolicyRead})
	if noExec.Revision() == s.Revision() {
		t.Fatal("executionEnabled is not part of the revision")
	}
}

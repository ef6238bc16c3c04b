package uitree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateRules holds Validate to the official host's gate rule by rule: every fixture in
// testdata/gate named <rule>.<case>.json breaks exactly that rule, pass.*.json are edge
// cases the gate accepts, and every rule has at least one failing fixture.
func TestGateRules(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/gate/*.json")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[Rule]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		rule, _, _ := strings.Cut(name, ".")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			err := Validate(data)
			if rule == "pass" {
				if err != nil {
					t.Fatalf("the gate accepts this payload; Validate: %v", err)
				}
				return
			}
			var ge *GateError
			if !errors.As(err, &ge) {
				t.Fatalf("Validate = %v, want a *GateError for rule %s", err, rule)
			}
			if string(ge.Rule) != rule {
				t.Fatalf("rule %s (%s), want %s", ge.Rule, ge.Error(), rule)
			}
		})
		covered[Rule(rule)] = true
	}
	for _, r := range Rules {
		if !covered[r] {
			t.Errorf("rule %s has no failing fixture in testdata/gate", r)
		}
	}
}

// TestOfficialFixturesPassTheGate: the official SDKs' trees (Android views, UIKit, MAUI
// with flags, React props) pass; the legacy form does not.
func TestOfficialFixturesPassTheGate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file string
		pass bool
	}{
		{"android-views.json", true}, {"ios-uikit.json", true}, {"maui-flags.json", true},
		{"react-props.json", true}, {"legacy-go.json", false},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			err := Validate(fixture(t, tt.file))
			if (err == nil) != tt.pass {
				t.Fatalf("Validate = %v, want pass=%v", err, tt.pass)
			}
		})
	}
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "official", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

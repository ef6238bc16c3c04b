package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/conformance"
)

// runCLI runs the command tree in process and returns its exit code and outputs.
func runConformCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), Env{Args: args, Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

func TestConformDemo(t *testing.T) {
	t.Parallel()
	code, out, errOut := runConformCLI(t, "conform", "--demo")
	if code != ExitOK || !strings.Contains(out, "conformance: PASS") || !strings.Contains(out, "PASS  catalog.unchanged") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestConformDemoJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := runConformCLI(t, "conform", "--demo", "--json", "--check", "batch", "--check", "catalog.unchanged")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var doc struct {
		Schema string `json:"schema"`
		OK     bool   `json:"ok"`
		Failed int    `json:"failed"`
		Checks []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	if doc.Schema != conformance.ReportSchema || !doc.OK || doc.Failed != 0 || doc.Checks[0].Name != "catalog.unchanged" {
		t.Fatalf("report: %s", out)
	}
	for _, c := range doc.Checks {
		if !strings.HasPrefix(c.Name, "batch.") && !strings.HasPrefix(c.Name, "final.") && c.Name != "catalog.unchanged" {
			t.Errorf("check %s ran", c.Name)
		}
	}
}

func TestConformUsage(t *testing.T) {
	t.Parallel()
	for _, k := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"conform", "--check", "nosuch"}, ExitUsage, ""},
		{[]string{"conform", "--list"}, ExitOK, "malformed.duplicate_keys"},
		// No app comes: the wait ends with a failure, not a hang.
		{[]string{"conform", "--discovery", "127.0.0.1:0", "--timeout", "200ms"}, ExitFailure, ""},
	} {
		t.Run(strings.Join(k.args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runConformCLI(t, k.args...)
			if code != k.code || !strings.Contains(out, k.out) {
				t.Errorf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", k.args, code, k.code, out, errOut)
			}
		})
	}
}

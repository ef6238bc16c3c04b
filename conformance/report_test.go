package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/conformance"
)

func TestReportForms(t *testing.T) {
	target := serveApp(t, newDemoApp(t))
	var progress []string
	rep := conformance.Run(context.Background(), target, conformance.Options{
		Checks:   []string{"catalog.full", "batch"},
		OnResult: func(r conformance.Result) { progress = append(progress, r.Name) },
	})
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != strings.Join(progress, " ") ||
		!strings.HasPrefix(got, "catalog.full batch.size_zero") || !strings.HasSuffix(got, "final.encoding") || strings.Contains(got, "call.") {
		t.Fatalf("checks run: %s (progress %v)", got, progress)
	}
	var text strings.Builder
	rep.WriteText(&text)
	if !strings.HasSuffix(text.String(), rep.Summary()+"\n") || !strings.Contains(rep.Summary(), "conformance: PASS") {
		t.Errorf("text report:\n%s", text.String())
	}
	raw, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema"`
		OK     bool   `json:"ok"`
		Passed int    `json:"passed"`
		Checks []struct {
			Name       string  `json:"name"`
			Status     string  `json:"status"`
			DurationMs float64 `json:"durationMs"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != conformance.ReportSchema || !doc.OK || doc.Passed != len(rep.Results) || len(doc.Checks) != len(rep.Results) || doc.Checks[0].Name != "catalog.full" {
		t.Errorf("JSON report: %s", raw)
	}
}

func TestChecksListed(t *testing.T) {
	names := conformance.Checks()
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("duplicate check %s", n)
		}
		seen[n] = true
	}
	for _, n := range []string{"catalog.unchanged", "batch.size_max", "asft.transfer", "malformed.duplicate_keys", "encoding.large_response"} {
		if !seen[n] {
			t.Errorf("missing check %s", n)
		}
	}
}

package conformance

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// Status is the verdict of one check.
type Status string

// The three verdicts.
const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	StatusSkip Status = "skip"
)

// Exchange is what went over the wire in the step of a check that failed: the request
// the suite sent and the app's answer (each shortened past MaxExchangeBytes).
type Exchange struct {
	Request  string `json:"request,omitzero"`
	Response string `json:"response,omitzero"`
}

// MaxExchangeBytes bounds each message quoted in a Result.
const MaxExchangeBytes = 4 << 10

// Result is the outcome of one check.
type Result struct {
	// Name is the check's stable dotted name, e.g. "catalog.unchanged".
	Name string `json:"name"`
	// Description says what the check verifies, with the page of the protocol reference
	// (docs/protocol) that requires it.
	Description string `json:"description"`
	Status      Status `json:"status"`
	// Duration is how long the check took.
	Duration time.Duration `json:"-"`
	// Reason says why the check failed or was skipped.
	Reason string `json:"reason,omitzero"`
	// Expected states what the protocol requires, when the check failed.
	Expected string `json:"expected,omitzero"`
	// Exchange is the failing step's traffic, when there was one.
	Exchange *Exchange `json:"exchange,omitzero"`
	// Notes report tolerated variants (docs/protocol/compatibility.md#tolerated-variants) the app showed.
	Notes []string `json:"notes,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	// SessionID is the target's session id.
	SessionID string    `json:"sessionId,omitzero"`
	StartedAt time.Time `json:"startedAt"`
	// Duration is how long the run took.
	Duration time.Duration `json:"-"`
	// Results lists the checks in the order they ran.
	Results []Result `json:"checks"`
}

// Counts returns the number of passed, failed and skipped checks.
func (r *Report) Counts() (passed, failed, skipped int) {
	for _, c := range r.Results {
		switch c.Status {
		case StatusPass:
			passed++
		case StatusFail:
			failed++
		case StatusSkip:
			skipped++
		}
	}
	return
}

// OK reports whether no check failed.
func (r *Report) OK() bool {
	_, failed, _ := r.Counts()
	return failed == 0
}

// Result returns the result of the named check, or nil.
func (r *Report) Result(name string) *Result {
	for i := range r.Results {
		if r.Results[i].Name == name {
			return &r.Results[i]
		}
	}
	return nil
}

// Summary is the report's one-line verdict, e.g.
// "conformance: PASS — 61 passed, 0 failed, 4 skipped in 1.8s".
func (r *Report) Summary() string {
	p, f, s := r.Counts()
	verdict := "PASS"
	if f > 0 {
		verdict = "FAIL"
	}
	return fmt.Sprintf("conformance: %s — %d passed, %d failed, %d skipped in %s", verdict, p, f, s, r.Duration.Round(time.Millisecond))
}

// WriteText writes the report for a terminal: one line per check, the reason under
// failed and skipped ones, the exchange under failed ones, and the summary line.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, c := range r.Results {
		fmt.Fprintf(&b, "%-4s  %-44s %s\n", strings.ToUpper(string(c.Status)), c.Name, c.Duration.Round(100*time.Microsecond))
		if c.Status != StatusPass && c.Reason != "" {
			fmt.Fprintf(&b, "      %s\n", indent(c.Reason))
		}
		if c.Status == StatusFail {
			if c.Expected != "" {
				fmt.Fprintf(&b, "      expected: %s\n", indent(c.Expected))
			}
			if c.Exchange != nil {
				if c.Exchange.Request != "" {
					fmt.Fprintf(&b, "      sent:     %s\n", indent(c.Exchange.Request))
				}
				if c.Exchange.Response != "" {
					fmt.Fprintf(&b, "      received: %s\n", indent(c.Exchange.Response))
				}
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "      note: %s\n", indent(n))
		}
	}
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") }

// jsonReport is the JSON form of a Report (version 1).
type jsonReport struct {
	Schema     string       `json:"schema"`
	OK         bool         `json:"ok"`
	Summary    string       `json:"summary"`
	Passed     int          `json:"passed"`
	Failed     int          `json:"failed"`
	Skipped    int          `json:"skipped"`
	SessionID  string       `json:"sessionId,omitzero"`
	StartedAt  time.Time    `json:"startedAt"`
	DurationMs float64      `json:"durationMs"`
	Checks     []jsonResult `json:"checks"`
}

type jsonResult struct {
	Result
	DurationMs float64 `json:"durationMs"`
}

// ReportSchema names the JSON form written by Report.JSON.
const ReportSchema = "ansight.conformance-report.v1"

// JSON returns the report as one JSON object (schema ReportSchema): ok, summary, counts,
// and every check with its status, duration, reason, expectation and exchange.
func (r *Report) JSON() ([]byte, error) {
	p, f, s := r.Counts()
	out := jsonReport{Schema: ReportSchema, OK: f == 0, Summary: r.Summary(), Passed: p, Failed: f, Skipped: s,
		SessionID: r.SessionID, StartedAt: r.StartedAt, DurationMs: millis(r.Duration), Checks: make([]jsonResult, len(r.Results))}
	for i, c := range r.Results {
		out.Checks[i] = jsonResult{Result: c, DurationMs: millis(c.Duration)}
	}
	return json.Marshal(out, json.Deterministic(true))
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

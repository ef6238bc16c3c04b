package flow

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// RunSchema is the schema of a Report's JSON form ('ansight test run --json').
const RunSchema = "ansight.test-run/v1"

// Status is the outcome of a flow or a step.
type Status string

// The statuses. A flow fails when a step fails (a tool's error it did not expect, an
// expectation that did not hold, a timeout); it is in error when it could not run as
// written (a variable with no value, the session gone, the host failing).
const (
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"
	StatusError   Status = "error"
	StatusSkipped Status = "skipped"
)

// Report is the outcome of flows run against sessions, one Result per flow per session:
// 'ansight test run --json' prints it, and the JUnit and HTML reports are written from it.
type Report struct {
	Schema     string    `json:"schema"`
	StartedAt  time.Time `json:"startedAt"`
	DurationMS int64     `json:"durationMs"`
	Passed     int       `json:"passed"`
	Failed     int       `json:"failed"`
	Errors     int       `json:"errors"`
	Results    []*Result `json:"results"`
}

// Result is the outcome of one flow against one session.
type Result struct {
	Name string `json:"name"`
	File string `json:"file"`
	// SessionID and AppID are the session's; Host names the fleet host it is on.
	SessionID  string        `json:"sessionId"`
	AppID      string        `json:"appId,omitzero"`
	Host       string        `json:"host,omitzero"`
	Status     Status        `json:"status"`
	StartedAt  time.Time     `json:"startedAt"`
	DurationMS int64         `json:"durationMs"`
	Steps      []*StepResult `json:"steps"`
	// Failure is the first failing step's (or why the flow could not run).
	Failure *Failure `json:"failure,omitzero"`
	// Recording links to the session's recording (the player's page of it), when known.
	Recording string `json:"recording,omitzero"`
}

// StepResult is the outcome of one step. The steps of an include are listed in its place,
// their Label prefixed with the include's.
type StepResult struct {
	// Phase is setup, steps or teardown; Index the step's place in it.
	Phase      string   `json:"phase"`
	Index      int      `json:"index"`
	Kind       StepKind `json:"kind"`
	Label      string   `json:"label"`
	Pos        Pos      `json:"pos"`
	Status     Status   `json:"status"`
	DurationMS int64    `json:"durationMs"`
	// Attempts counts the runs of a step with retry: (1 otherwise; 0 when skipped).
	Attempts int `json:"attempts,omitzero"`
	// Failure says why the step failed.
	Failure *Failure `json:"failure,omitzero"`
	// Output is the step's outcome (the tool's result, the error it expected, the UI
	// operation's result), cut at 64 KiB.
	Output jsontext.Value `json:"output,omitzero"`
	// Screenshot is a screenshot step's image, or the screen when the step failed; Tree
	// the visual tree when it failed.
	Screenshot *Screenshot    `json:"screenshot,omitzero"`
	Tree       jsontext.Value `json:"tree,omitzero"`
	started    time.Time
}

// maxOutput bounds a step's Output.
const maxOutput = 64 << 10

// Screenshot is a PNG image a flow kept. PNG is held until a report writes it (Path is
// then where); Bytes is its size.
type Screenshot struct {
	Name  string `json:"name"`
	Path  string `json:"path,omitzero"`
	Bytes int    `json:"bytes"`
	PNG   []byte `json:"-"`
}

// Failure describes a failed step: which, what it expected, what it found.
type Failure struct {
	// Step names the step ("steps[2] call notes.get") and Pos is where it is.
	Step string `json:"step"`
	Pos  Pos    `json:"pos"`
	// Expectation is what did not hold (`/title equals "Groceries"`, "success",
	// "an error tool_policy_not_granted"); Actual what was found instead.
	Expectation string `json:"expectation,omitzero"`
	Actual      string `json:"actual,omitzero"`
	// Message is the whole account in one line.
	Message string `json:"message"`
}

// Tally counts the results by status into the totals.
func (run *Report) Tally() {
	run.Passed, run.Failed, run.Errors = 0, 0, 0
	for _, r := range run.Results {
		switch r.Status {
		case StatusPassed:
			run.Passed++
		case StatusFailed:
			run.Failed++
		default:
			run.Errors++
		}
	}
}

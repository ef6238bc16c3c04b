package cli

import (
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Schemas of the JSON outputs. A schema changes name when its shape changes incompatibly.
const (
	schemaError   = "ansight.cli.error/v1"
	schemaVersion = "ansight.cli.version/v1"
)

type errorOutput struct {
	Schema string    `json:"schema"`
	Error  errorBody `json:"error"`
}

type errorBody struct {
	Code     string `json:"code,omitzero"`
	Message  string `json:"message"`
	ExitCode int    `json:"exitCode"`
	Hint     string `json:"hint,omitzero"`
}

type versionOutput struct {
	Schema  string `json:"schema"`
	Version string `json:"version"`
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v, json.Deterministic(true), jsontext.Multiline(true), jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// The outputs of app call, screenshot and push-file (ansight.app-call/v2) and of app batch
// (ansight.app-batch/v2): the control API's answers (hostapi.Call, hostapi.Batch, v1) with
// the app's result lifted to one level, so that a script reads .result as the tool's own
// result rather than .result.result (v1 nested the app's whole tool.result payload).
const (
	schemaAppCall  = "ansight.app-call/v2"
	schemaAppBatch = "ansight.app-batch/v2"
)

// callOutput is one call's outcome: the tool's result (or error), its evidence and
// artifacts.
type callOutput struct {
	Schema    string `json:"schema"`
	SessionID string `json:"sessionId"`
	ToolID    string `json:"toolId"`
	Success   bool   `json:"success"`
	// Message is the app's message beside its result, if any.
	Message    string                  `json:"message,omitzero"`
	Result     jsontext.Value          `json:"result,omitzero"`
	Evidence   map[string]wire.Outcome `json:"evidence,omitzero"`
	Error      *hostapi.ToolError      `json:"error,omitzero"`
	Artifacts  []hostapi.Artifact      `json:"artifacts,omitempty"`
	DurationMS int64                   `json:"durationMs"`
}

func appCallJSON(res *hostapi.Call) callOutput {
	out := callOutput{Schema: schemaAppCall, SessionID: res.SessionID, ToolID: res.ToolID, Success: res.Success,
		Error: res.Error, Artifacts: res.Artifacts, DurationMS: res.DurationMS}
	if r := res.Result; r != nil {
		out.Message, out.Result, out.Evidence = r.Message, r.Result, r.Evidence
	}
	return out
}

// batchOutput is a batch's outcome: the calls' outcomes in order (each with its result at
// one level), or the error that refused the whole batch.
type batchOutput struct {
	Schema       string             `json:"schema"`
	SessionID    string             `json:"sessionId"`
	Success      bool               `json:"success"`
	Completed    int                `json:"completed"`
	Requested    int                `json:"requested"`
	StoppedEarly bool               `json:"stoppedEarly"`
	Results      []wire.BatchItem   `json:"results"`
	Error        *hostapi.ToolError `json:"error,omitzero"`
	Refused      []int              `json:"refused,omitempty"`
	Artifacts    []hostapi.Artifact `json:"artifacts,omitempty"`
	DurationMS   int64              `json:"durationMs"`
}

func appBatchJSON(res *hostapi.Batch) batchOutput {
	out := batchOutput{Schema: schemaAppBatch, SessionID: res.SessionID, Success: res.Success, Error: res.Error,
		Refused: res.Refused, Artifacts: res.Artifacts, DurationMS: res.DurationMS, Results: []wire.BatchItem{}}
	if r := res.Result; r != nil {
		out.Completed, out.Requested, out.StoppedEarly = r.Completed, r.Requested, r.StoppedEarly
		if r.Results != nil {
			out.Results = r.Results
		}
	}
	return out
}

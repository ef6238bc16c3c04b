package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// appBatchOptions are the flags of 'ansight app batch'.
type appBatchOptions struct {
	sel              sessionSelector
	calls, callsFile string
	continueOnError  bool
	timeout          time.Duration
}

func newAppBatchCmd(g *globals) *cobra.Command {
	o := &appBatchOptions{}
	cmd := &cobra.Command{
		Use:   "batch [session]",
		Short: "Run 1 to 32 calls in order, as one request",
		Long: `Run 1 to 32 tool calls sequentially in the app, as one request.

--calls is a JSON array of calls, each {"toolId", "arguments"?, "after"?, "callId"?}
(comments and trailing commas allowed). The host checks every call before it sends the
batch: one it must refuse (a tool the app does not list, one above the session's grant)
refuses the whole batch and nothing runs. The app stops at the first failed call unless
--continue-on-error is given; then a call the host refuses fails on its own and the others
run.

Each call's result is printed in a compact form (--json prints them whole), a failed
call's error with its details (the schema violations of bad arguments).`,
		Example: `  ansight app batch com-ansight-demo-notes-001 --calls '[{"toolId":"notes.list","callId":"before"},{"toolId":"app.get_state"}]'
  ansight app batch --app-id com.ansight.demo.notes --calls-file steps.jsonc --continue-on-error --json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE:              func(c *cobra.Command, args []string) error { return o.run(c.Context(), g, args) },
	}
	f := cmd.Flags()
	o.sel.addFlag(cmd)
	f.StringVar(&o.calls, "calls", "", "the calls, a JSON array ('-': standard input)")
	f.StringVar(&o.callsFile, "calls-file", "", "read the calls from this file ('-': standard input)")
	f.BoolVar(&o.continueOnError, "continue-on-error", false, "run the remaining calls after a failure")
	f.DurationVar(&o.timeout, "timeout", 0, "how long to wait for the batch's answer (default 20s, at most 1h)")
	return cmd
}

// run sends the batch and prints its outcome: exit 0 when every call succeeded.
func (o *appBatchOptions) run(ctx context.Context, g *globals, args []string) error {
	raw, err := g.jsonInput("calls", o.calls, o.callsFile, "")
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		return &exitError{code: ExitUsage, err: fmt.Errorf("give the calls with --calls or --calls-file"), hint: callsHint}
	}
	list, err := decodeCalls(raw)
	if err != nil {
		return err
	}
	ms, err := timeoutMS(o.timeout)
	if err != nil {
		return err
	}
	req := hostapi.BatchRequest{ContinueOnError: o.continueOnError, Calls: list, TimeoutMS: ms}
	res, err := transfer(g, ctx, &o.sel, args, hostapi.Backend.Batch, req)
	if err != nil {
		return err
	}
	if g.json {
		if err := writeJSON(g.env.Stdout, appBatchJSON(res)); err != nil {
			return err
		}
	} else {
		printBatch(g.env.Stdout, g.env.Stderr, list, res, o.continueOnError)
	}
	if res.Error != nil {
		return toolExit(res.Error)
	}
	if !res.Success {
		return &exitError{code: ExitFailure, err: silentError{}}
	}
	return nil
}

// callsHint shows the shape --calls expects.
const callsHint = `--calls is a JSON array of calls, like '[{"toolId":"notes.list"},{"toolId":"notes.get","arguments":{"id":"n1"},"callId":"second"}]'`

// decodeCalls reads --calls: an array of 1 to 32 call objects. Mistakes are usage errors
// that name the call and say what is expected, in JSON's words.
func decodeCalls(raw jsontext.Value) ([]hostapi.CallRequest, error) {
	usage := func(format string, args ...any) error {
		return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...), hint: callsHint}
	}
	if raw.Kind() != '[' {
		return nil, usage("--calls must be a JSON array of calls, not %s", jsonKind(raw))
	}
	var items []jsontext.Value
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, usage("--calls: %v", err)
	}
	if len(items) == 0 || len(items) > wire.MaxBatchSize {
		return nil, usage("a batch has 1 to %d calls, not %d", wire.MaxBatchSize, len(items))
	}
	list := make([]hostapi.CallRequest, len(items))
	for i, it := range items {
		if err := decodeCall(it, &list[i]); err != nil {
			return nil, usage("--calls: call %d: %v", i, err)
		}
	}
	return list, nil
}

// decodeCall reads one call of --calls.
func decodeCall(raw jsontext.Value, c *hostapi.CallRequest) error {
	if raw.Kind() != '{' {
		return fmt.Errorf("want an object like {\"toolId\":\"notes.list\"}, not %s", jsonKind(raw))
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal(raw, &members); err != nil {
		return err
	}
	for _, name := range sortedKeys(members) {
		v := members[name]
		switch name {
		case "toolId", "callId":
			var s string
			if v.Kind() != '"' || json.Unmarshal(v, &s) != nil {
				return fmt.Errorf("%s must be a string, not %s", name, jsonKind(v))
			}
			if name == "toolId" {
				c.ToolID = s
			} else {
				c.CallID = s
			}
		case "arguments":
			if v.Kind() != '{' && v.Kind() != 'n' {
				return fmt.Errorf("arguments must be an object, not %s", jsonKind(v))
			}
			c.Arguments = v
		case "after":
			var a wire.After
			if v.Kind() != '{' {
				return fmt.Errorf(`after must be an object like {"include":["visualTree"]}, not %s`, jsonKind(v))
			}
			if err := wire.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("after: %v", err)
			}
			c.After = &a
		case "timeoutMs":
			return fmt.Errorf("a call of a batch has no timeout of its own: give the batch's with --timeout")
		default:
			return fmt.Errorf("unknown member %q (a call has toolId, arguments, after and callId)", name)
		}
	}
	if c.ToolID == "" {
		return fmt.Errorf("toolId is missing")
	}
	return nil
}

// jsonKind names the kind of a JSON value, for messages.
func jsonKind(v jsontext.Value) string {
	switch v.Kind() {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// batchResultWidth bounds the one-line form of a call's result in a batch.
const batchResultWidth = 110

// printBatch writes a batch's outcome: every call in order with its result in one line or
// its error with details, the calls that did not run, then a summary. A whole-batch
// refusal names the call the host refused.
func printBatch(out, errw io.Writer, calls []hostapi.CallRequest, res *hostapi.Batch, continueOnError bool) {
	if e := res.Error; e != nil {
		printBatchRefusal(errw, e, continueOnError)
		return
	}
	r := res.Result
	shortened := false
	listed := make(map[int]bool, len(r.Results))
	failed := 0
	for _, it := range r.Results {
		listed[it.Index] = true
		if !it.Success {
			failed++
		}
		shortened = printBatchItem(out, it, slices.Contains(res.Refused, it.Index)) || shortened
	}
	for i, c := range calls {
		if !listed[i] {
			printf(out, "[%d] %s: not run (the batch stopped early)\n", i, callLabel(c.ToolID, c.CallID))
		}
	}
	summary := fmt.Sprintf("\n%d of %d calls ran", r.Completed, r.Requested)
	if failed > 0 {
		summary += fmt.Sprintf(", %d failed", failed)
	}
	if r.StoppedEarly {
		summary += ", stopped early"
	}
	fmt.Fprintf(out, "%s, %d ms\n", summary, res.DurationMS)
	if shortened {
		fmt.Fprintln(out, "results shortened to one line: --json prints them whole")
	}
	printArtifacts(out, res.Artifacts)
}

// printBatchRefusal writes a batch that ran no call: refused by the host as a whole (it
// names the call that made it), or failed before any call.
func printBatchRefusal(errw io.Writer, e *hostapi.ToolError, continueOnError bool) {
	if e.Index == nil {
		printToolError(errw, e)
		return
	}
	printf(errw, "call %d (%s) refused by the host: %s: %s\n", *e.Index, e.ToolID, e.Code, e.Message)
	printErrorDetails(errw, e)
	fmt.Fprintln(errw, "  nothing ran: the host checks every call before it sends the batch")
	if !continueOnError && e.Kind != wire.KindDenied {
		fmt.Fprintln(errw, "  hint: with --continue-on-error, a call the host refuses fails on its own and the others run")
	}
}

// printBatchItem writes one call of a batch: its result in one line, or its error with
// details. It reports whether it shortened the result.
func printBatchItem(out io.Writer, it wire.BatchItem, refused bool) (shortened bool) {
	label := callLabel(it.ToolID, it.CallID)
	if !it.Success {
		by := "failed"
		if refused {
			by = "refused by the host"
		}
		code, msg := wire.CodeExecutionFailed, it.Message
		if it.Error != nil {
			code, msg = it.Error.Code, it.Error.Message
		}
		printf(out, "[%d] %s: %s: %s: %s\n", it.Index, label, safe(by), code, msg)
		if it.Error != nil {
			printErrorDetails(out, &hostapi.ToolError{Error: *it.Error})
		}
		return false
	}
	printf(out, "[%d] %s: ok\n", it.Index, label)
	if it.Message != "" {
		printf(out, "    %s\n", oneLine(it.Message, batchResultWidth))
	}
	if len(it.Result) > 0 {
		line := compactJSON(it.Result, batchResultWidth)
		shortened = len([]rune(line)) >= batchResultWidth
		printf(out, "    %s\n", line)
	}
	printEvidence(out, it.Evidence, "    ")
	return shortened
}

// callLabel names a call of a batch: its tool, with its call id when it has one.
func callLabel(toolID, callID string) string {
	if callID != "" {
		return toolID + " (" + callID + ")"
	}
	return toolID
}

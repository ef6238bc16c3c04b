package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

func newAppCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "app",
		Short: "Discover and call a connected app's tools",
		Long: `Discover and call the tools a connected app registers.

Discover with a focused, compact query first, then fetch one definition, then call:
  ansight app tools <session> --query "node tap" --policy write
  ansight app tools <session> --tool-id ui.perform_action --detail full
  ansight app call <session> ui.query_nodes --arguments '{"textContains":"save"}'`,
	}
	cmd.AddCommand(newAppToolsCmd(g), newAppCallCmd(g), newAppBatchCmd(g), newAppScreenshotCmd(g), newAppPushFileCmd(g), newAppInteractCmd(g))
	return cmd
}

// appToolsOptions are the flags of 'ansight app tools'.
type appToolsOptions struct {
	sel                sessionSelector
	req                hostapi.ToolsRequest
	includeUnavailable bool
}

func newAppToolsCmd(g *globals) *cobra.Command {
	o := &appToolsOptions{}
	req := &o.req
	cmd := &cobra.Command{
		Use:   "tools [session]",
		Short: "List or search a connected app's tools",
		Long: `List or search the tools of a connected app.

Summary entries carry no schemas; --detail full adds them. Every tool is listed, also
those the host would refuse to call, with why (a policy above the session's grant, a tool
not available in the app's current state); --executable-only leaves those out. --query
searches the tools' schemas too (their properties' names, descriptions and enum values).
Without --max-results every match is listed.`,
		Example: `  ansight app tools com-ansight-demo-notes-001
  ansight app tools com-ansight-demo-notes-001 --query "note" --policy write --max-results 5
  ansight app tools com-ansight-demo-notes-001 --tool-id notes.create --detail full --json
  ansight app tools --app-id com.ansight.demo.notes --id-prefix ui. --include-unavailable`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE:              func(c *cobra.Command, args []string) error { return o.run(c.Context(), g, args) },
	}
	f := cmd.Flags()
	o.sel.addFlag(cmd)
	f.StringVar(&req.Query, "query", "", "words that must all occur in a tool's id, name, description, category, keywords or schemas")
	f.StringVar(&req.Feature, "feature", "", "more words, AND-ed with --query")
	f.StringVar(&req.Category, "category", "", "only tools of this category")
	f.StringVar(&req.IDPrefix, "id-prefix", "", "only tools whose id starts with this (ui.)")
	f.StringSliceVar(&req.ToolIDs, "tool-id", nil, "only these tools (exact ids; repeat or comma-separate)")
	f.StringVar(&req.Policy, "policy", "", "only tools of this policy: read, write or critical")
	f.BoolVar(&req.ExecutableOnly, "executable-only", false, "only tools the host would call now")
	f.BoolVar(&o.includeUnavailable, "include-unavailable", false, "also tools the host would not call now, with the reason (the default here; the official CLI's focused searches leave them out)")
	f.IntVar(&req.MaxResults, "max-results", 0, "at most this many tools (default: all of them; the official CLI's default is 20)")
	f.StringVar(&req.Detail, "detail", hostapi.DetailSummary, "summary (no schemas) or full (with schemas)")
	f.StringVar(&req.IfRevision, "if-revision", "", "answer 'unchanged' when the catalog still has this revision")
	return cmd
}

// run lists the session's tools the request keeps.
func (o *appToolsOptions) run(ctx context.Context, g *globals, args []string) error {
	req := o.req
	if req.Detail != "" && req.Detail != hostapi.DetailSummary && req.Detail != hostapi.DetailFull {
		return usageErrorf("--detail must be summary or full")
	}
	if req.Policy != "" {
		if _, err := wire.ParsePolicy(req.Policy); err != nil {
			return usageErrorf("--policy: %v", err)
		}
	}
	if req.MaxResults < 0 {
		return usageErrorf("--max-results must be positive")
	}
	if req.ExecutableOnly && o.includeUnavailable {
		return usageErrorf("give --executable-only or --include-unavailable, not both")
	}
	b, id, err := g.session(ctx, &o.sel, args)
	if err != nil {
		return err
	}
	tools, err := b.Tools(ctx, id, req)
	if err != nil {
		return hostErr(err)
	}
	if g.json {
		return writeJSON(g.env.Stdout, tools)
	}
	printTools(g.env.Stdout, tools, req.Detail == hostapi.DetailFull)
	return nil
}

func printTools(w io.Writer, t *hostapi.Tools, full bool) {
	if t.Unchanged {
		printf(w, "unchanged (revision %s)\n", t.Revision)
		return
	}
	if len(t.Tools) == 0 {
		printf(w, "no tools match (the app has %d, revision %s)\n", t.TotalCount, shortRevision(t.Revision))
		return
	}
	tw := newTable(w).colourBy(1, policyColour).colourBy(2, stateColour)
	tw.header("TOOL", "POLICY", "STATE", "DESCRIPTION")
	for _, e := range t.Tools {
		tw.row(e.ID, string(e.Policy), entryState(&e), oneLine(e.Description, 72))
	}
	tw.flush()
	more := ""
	if t.Truncated {
		more = " (truncated: narrow the search or raise --max-results)"
	}
	printf(w, "\n%d of %d tools, revision %s%s\n", t.Count, t.TotalCount, shortRevision(t.Revision), safe(more))
	if full {
		for _, e := range t.Tools {
			printf(w, "\n%s — %s\n", e.ID, e.Name)
			if len(e.PrerequisiteToolIDs) > 0 {
				printf(w, "  prerequisites: %s\n", strings.Join(e.PrerequisiteToolIDs, ", "))
			}
			if len(e.ArgumentsSchema) > 0 {
				printf(w, "  arguments: %s\n", jsonBlock(e.ArgumentsSchema, "  "))
			}
			if len(e.ResultSchema) > 0 {
				printf(w, "  result: %s\n", jsonBlock(e.ResultSchema, "  "))
			}
		}
	}
}

// entryState is "ok" or why the host would not call the tool.
func entryState(e *wire.ToolEntry) string {
	if e.Denial != nil {
		return "blocked:" + string(e.Denial.Code)
	}
	if e.Runtime != nil && !e.Runtime.Available {
		code := e.Runtime.Code
		if code == "" {
			code = wire.CodeUnavailable
		}
		return "unavailable:" + string(code)
	}
	if !e.IsExecutable() {
		return "not executable"
	}
	return "ok"
}

// appCallOptions are the flags of 'ansight app call'.
type appCallOptions struct {
	sel                              sessionSelector
	args, argsFile, after, afterFile string
	afterTree, afterShot             bool
	afterDelay                       int
	callID                           string
	outDir                           string
	timeout                          time.Duration
}

func newAppCallCmd(g *globals) *cobra.Command {
	o := &appCallOptions{}
	cmd := &cobra.Command{
		Use:   "call [session] <tool-id>",
		Short: "Call one tool",
		Long: `Call one tool of a connected app with a JSON object of arguments.

Post-call evidence (--after-tree, --after-screenshot) is captured by the app after the
call succeeds. Artifacts (screenshots, files) are saved as files whose paths are printed.
The host waits 20 s for the app's answer, or as long as the call asks for (ui.wait's
timeoutMilliseconds plus 5 s, a download's size, a tool's hint:duration); --timeout sets the
limit yourself (up to 1h).
Exit codes: 0 the tool succeeded, 1 it failed, 5 unknown or unavailable tool, 6 denied,
7 the app disconnected, 8 the host stopped waiting at the limit (raise it with --timeout).`,
		Example: `  ansight app call com-ansight-demo-notes-001 notes.list
  ansight app call com-ansight-demo-notes-001 notes.create --arguments '{"title":"Groceries"}' --after-tree
  echo '{"textContains":"save"}' | ansight app call com-ansight-demo-notes-001 ui.query_nodes --arguments -
  ansight app call --app-id com.ansight.demo.notes ui.get_screenshot --json
  ansight app call com-ansight-demo-notes-001 ui.wait --arguments '{"textContains":"Saved","condition":"exists","timeoutMilliseconds":45000}' --timeout 60s`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: g.completeSessionThenTool,
		RunE: func(c *cobra.Command, pos []string) error {
			if len(pos) == 1 {
				o.sel.lone, o.sel.usage = pos[0], c.UseLine()
			}
			return o.run(c.Context(), g, pos[:len(pos)-1], pos[len(pos)-1], c.Flags().Changed("after-delay-ms"))
		},
	}
	f := cmd.Flags()
	o.sel.addFlag(cmd)
	f.StringVar(&o.args, "arguments", "", "the arguments, a JSON object ('-': standard input)")
	f.StringVar(&o.argsFile, "arguments-file", "", "read the arguments from this file ('-': standard input)")
	f.StringVar(&o.after, "after", "", `evidence to capture after the call, a JSON object like {"include":["visualTree"],"delayMilliseconds":100}`)
	f.StringVar(&o.afterFile, "after-file", "", "read --after from this file")
	f.BoolVar(&o.afterTree, "after-tree", false, "capture the visual tree after the call")
	f.BoolVar(&o.afterShot, "after-screenshot", false, "capture a screenshot after the call")
	f.IntVar(&o.afterDelay, "after-delay-ms", 0, "wait this long (0-2000 ms) before capturing evidence")
	f.StringVar(&o.callID, "call-id", "", "a caller id echoed in the result")
	f.StringVarP(&o.outDir, "output-dir", "o", "", "move received artifacts into this directory")
	f.DurationVar(&o.timeout, "timeout", 0, "how long to wait for the app's answer (default 20s, at most 1h)")
	return cmd
}

// run calls the tool and prints its outcome; the exit code follows the tool's error.
// delaySet says that --after-delay-ms was given.
func (o *appCallOptions) run(ctx context.Context, g *globals, sessArgs []string, toolID string, delaySet bool) error {
	arguments, err := g.jsonInput("arguments", o.args, o.argsFile, "{}")
	if err != nil {
		return err
	}
	if arguments.Kind() != '{' {
		return usageErrorf(`--arguments must be a JSON object like '{"title":"Groceries"}', not %s`, jsonKind(arguments))
	}
	ms, err := timeoutMS(o.timeout)
	if err != nil {
		return err
	}
	req := hostapi.CallRequest{ToolID: toolID, Arguments: arguments, CallID: o.callID, TimeoutMS: ms}
	req.After, err = g.afterInput(o.after, o.afterFile, o.afterTree, o.afterShot, o.afterDelay, delaySet)
	if err != nil {
		return err
	}
	res, err := transfer(g, ctx, &o.sel, sessArgs, hostapi.Backend.Call, req)
	if err != nil {
		return err
	}
	if o.outDir != "" {
		if err := moveArtifacts(res, o.outDir); err != nil {
			return err
		}
	}
	if g.json {
		if err := writeJSON(g.env.Stdout, appCallJSON(res)); err != nil {
			return err
		}
	} else {
		printCall(g.env.Stdout, g.env.Stderr, res)
	}
	return toolExit(res.Error)
}

// screenshotFormat decides a screenshot's format from --format and the -o file name: they
// must agree, and a name with another extension needs --format.
func screenshotFormat(format, output string) (string, error) {
	if format != "" && format != "png" && format != "jpeg" {
		return "", usageErrorf("--format must be png or jpeg")
	}
	byName := ""
	switch ext := strings.ToLower(filepath.Ext(output)); ext {
	case ".png":
		byName = "png"
	case ".jpg", ".jpeg":
		byName = "jpeg"
	case "":
	default:
		if format == "" {
			return "", usageErrorf("-o %s: name the file .png, .jpg or .jpeg, or give --format", output)
		}
	}
	switch {
	case format != "" && byName != "" && format != byName:
		return "", usageErrorf("-o %s is a %s file name, but --format is %s", output, byName, format)
	case format != "":
		return format, nil
	case byName != "":
		return byName, nil
	}
	return "png", nil
}

// timeoutMS converts --timeout to a request's timeoutMs (0: the host's default).
func timeoutMS(d time.Duration) (int64, error) {
	ms := d.Milliseconds()
	if d < 0 || ms > hostapi.MaxTimeoutMS || (d > 0 && ms == 0) {
		return 0, usageErrorf("--timeout must be between 1ms and 1h")
	}
	return ms, nil
}

// afterInput builds the after object from --after/--after-file or the shortcuts.
func (g *globals) afterInput(inline, file string, tree, shot bool, delay int, delaySet bool) (*wire.After, error) {
	if inline != "" || file != "" {
		if tree || shot || delaySet {
			return nil, usageErrorf("give --after or the --after-* shortcuts, not both")
		}
		raw, err := g.jsonInput("after", inline, file, "")
		if err != nil {
			return nil, err
		}
		var a wire.After
		if err := wire.Unmarshal(raw, &a); err != nil {
			return nil, usageErrorf("--after: %v", err)
		}
		return &a, nil
	}
	if !tree && !shot && !delaySet {
		return nil, nil
	}
	if delay < 0 || delay > wire.MaxAfterDelayMilliseconds {
		return nil, usageErrorf("--after-delay-ms must be between 0 and %d", wire.MaxAfterDelayMilliseconds)
	}
	a := &wire.After{DelayMilliseconds: delay}
	if tree || !shot {
		a.Include = append(a.Include, wire.EvidenceVisualTree)
	}
	if shot {
		a.Include = append(a.Include, wire.EvidenceScreenshot)
	}
	return a, nil
}

// toolExit maps a tool error to the exit code scripts rely on.
func toolExit(e *hostapi.ToolError) error {
	if e == nil {
		return nil
	}
	return &exitError{code: exitCodeOfKind(e.Kind), err: silentError{}}
}

// silentError ends a command whose outcome was already printed.
type silentError struct{}

func (silentError) Error() string { return "" }

func printCall(out, errw io.Writer, res *hostapi.Call) {
	if res.Error != nil {
		printToolError(errw, res.Error)
		return
	}
	if res.Result != nil {
		if res.Result.Message != "" {
			printf(out, "%s\n", res.Result.Message)
		}
		if len(res.Result.Result) > 0 {
			printf(out, "%s\n", jsonBlock(res.Result.Result, ""))
		}
		printEvidence(out, res.Result.Evidence, "")
	}
	printArtifacts(out, res.Artifacts)
}

// printEvidence writes one line per evidence outcome of a call.
func printEvidence(w io.Writer, evidence map[string]wire.Outcome, indent string) {
	for _, name := range sortedKeys(evidence) {
		o := evidence[name]
		if o.Success {
			printf(w, "%sevidence %s: ok (%s, %d bytes)\n", safe(indent), name, o.ToolID, len(o.Result))
		} else if o.Error != nil {
			printf(w, "%sevidence %s: failed: %s: %s\n", safe(indent), name, o.Error.Code, o.Error.Message)
			if o.Error.Code == wire.CodeNotFound {
				printf(w, "%s  hint: the app has no UI tools (%s is not in its catalog), so it cannot capture %s evidence\n", safe(indent), o.ToolID, name)
			}
		}
	}
}

func printArtifacts(w io.Writer, arts []hostapi.Artifact) {
	for _, a := range arts {
		if a.Status == "complete" {
			printf(w, "saved %s (%s, %s)\n", a.Path, a.MimeType, humanBytes(a.SizeBytes))
		} else {
			printf(w, "artifact %s %s: %s\n", a.FileName, a.Status, a.Error)
		}
	}
}

func printToolError(w io.Writer, e *hostapi.ToolError) {
	by := ""
	if e.RefusedByHost {
		by = " (refused by the host; the app was not called)"
	}
	printf(w, "error %s: %s%s\n", e.Code, e.Message, safe(by))
	printErrorDetails(w, e)
}

// printErrorDetails writes what a tool error carries besides its code and message, and a
// hint for the codes that have a next step.
func printErrorDetails(w io.Writer, e *hostapi.ToolError) {
	if e.Retryable {
		fmt.Fprintln(w, "  retryable: yes")
	}
	if len(e.Details) > 0 {
		printf(w, "  details: %s\n", jsonBlock(e.Details, "  "))
	}
	switch e.Code {
	case wire.CodeStaleNodeReference:
		fmt.Fprintln(w, "  hint: the screen changed; query the node again with ui.query_nodes")
	case wire.CodePolicyNotGranted:
		fmt.Fprintln(w, "  hint: the session's grant does not cover this tool's policy; pair with a higher --max-tool-policy")
	}
}

// moveArtifacts moves a call's completed artifacts into dir and rewrites their paths,
// in the artifact list and in the result's transfer descriptors (artifactPath).
func moveArtifacts(res *hostapi.Call, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for i := range res.Artifacts {
		a := &res.Artifacts[i]
		if a.Status != "complete" || a.Path == "" {
			continue
		}
		if err := relocate(res, a, filepath.Join(abs, filepath.Base(a.Path))); err != nil {
			return err
		}
	}
	return nil
}

// relocate moves artifact a of res to dst (an absolute path) and makes res say so: the
// artifact's path, and every artifactPath of the result and its evidence that named it.
func relocate(res *hostapi.Call, a *hostapi.Artifact, dst string) error {
	if err := moveFile(a.Path, dst); err != nil {
		return err
	}
	oldQ, _ := json.Marshal(a.Path)
	newQ, _ := json.Marshal(dst)
	a.Path = dst
	if r := res.Result; r != nil {
		r.Result = jsontext.Value(bytes.ReplaceAll(r.Result, oldQ, newQ))
		for name, o := range r.Evidence {
			o.Result = jsontext.Value(bytes.ReplaceAll(o.Result, oldQ, newQ))
			r.Evidence[name] = o
		}
	}
	return nil
}

func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Remove(src)
}

// appScreenshotOptions are the flags of 'ansight app screenshot'.
type appScreenshotOptions struct {
	sel            sessionSelector
	output, format string
	maxWidth       int
}

func newAppScreenshotCmd(g *globals) *cobra.Command {
	o := &appScreenshotOptions{}
	cmd := &cobra.Command{
		Use:   "screenshot [session]",
		Short: "Save the app's current screen as an image file",
		Long: `Save the app's current screen as an image file, through the app's ui.get_screenshot.

The format follows the file name given with -o (.png, .jpg or .jpeg), or --format; a
name whose extension says another format than --format is refused.`,
		Example:           "  ansight app screenshot com-ansight-demo-notes-001 -o screen.png\n  ansight app screenshot --app-id com.ansight.demo.notes -o screen.jpg --max-width 320",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE:              func(c *cobra.Command, args []string) error { return o.run(c.Context(), g, args) },
	}
	f := cmd.Flags()
	o.sel.addFlag(cmd)
	f.StringVarP(&o.output, "output", "o", "", "file to write (default: screenshot-<session>-<time>.png in the current directory)")
	f.StringVar(&o.format, "format", "", "png or jpeg (default: from the -o file name, else png)")
	f.IntVar(&o.maxWidth, "max-width", 0, "scale the image down to at most this width")
	return cmd
}

// run takes the screenshot (its transfer's progress shown) and saves it.
func (o *appScreenshotOptions) run(ctx context.Context, g *globals, args []string) error {
	format, err := screenshotFormat(o.format, o.output)
	if err != nil {
		return err
	}
	b, id, err := g.session(ctx, &o.sel, args)
	if err != nil {
		return err
	}
	shotArgs := map[string]any{"format": format}
	if o.maxWidth > 0 {
		shotArgs["maxWidth"] = o.maxWidth
	}
	raw, _ := json.Marshal(shotArgs)
	bar := g.progress()
	res, err := b.Call(ctx, id, hostapi.CallRequest{ToolID: wire.ScreenshotToolID, Arguments: raw}, bar.update)
	bar.done()
	if err != nil {
		return hostErr(err)
	}
	if res.Error != nil {
		if g.json {
			writeJSON(g.env.Stdout, appCallJSON(res))
		} else {
			printToolError(g.env.Stderr, res.Error)
			if res.Error.Code == wire.CodeNotFound {
				printf(g.env.Stderr, "  the app has no UI tools: %s is not in its catalog, so it cannot take screenshots\n", wire.ScreenshotToolID)
			}
		}
		return toolExit(res.Error)
	}
	return o.save(g, res, id, format)
}

// save moves the screenshot's file to -o (by default a name of the session and the time
// in the current directory) and says where it is.
func (o *appScreenshotOptions) save(g *globals, res *hostapi.Call, id, format string) error {
	var art *hostapi.Artifact
	for i := range res.Artifacts {
		if res.Artifacts[i].Status == "complete" {
			art = &res.Artifacts[i]
			break
		}
	}
	if art == nil {
		return fmt.Errorf("the app answered without a screenshot file")
	}
	output := o.output
	if output == "" {
		ext := ".png"
		if format == "jpeg" {
			ext = ".jpg"
		}
		output = fmt.Sprintf("screenshot-%s-%s%s", id, time.Now().Format("20060102-150405"), ext)
	}
	abs, err := filepath.Abs(output)
	if err != nil {
		return err
	}
	if err := relocate(res, art, abs); err != nil {
		return err
	}
	if g.json {
		return writeJSON(g.env.Stdout, appCallJSON(res))
	}
	printf(g.env.Stdout, "saved %s (%s)\n", abs, humanBytes(art.SizeBytes))
	return nil
}

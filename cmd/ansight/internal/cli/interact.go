package cli

import (
	"context"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
)

// interactOptions are app interact's flags.
type interactOptions struct {
	session, sessionID, app, appID string
	repository                     string
	jsonl, screenshots             bool
	timeoutMs, taskTimeoutMs       int
	timeout                        time.Duration
}

func newAppInteractCmd(g *globals) *cobra.Command {
	var o interactOptions
	cmd := &cobra.Command{
		Use:   "interact [session]",
		Short: "Drive an app's screen from a script: JSON Lines requests in, replies out",
		Long: `Drive a connected app's screen through one process: one JSON request a line on standard
input, one reply a line on standard output (ansight.app-interaction/v1, as the official
CLI's app interact). The first line is a ready reply with the screen; every reply carries
the screen after the command ("ui": its shown nodes with their automation ids, texts,
roles, values and actions).

Requests: {"id","command"} with command snapshot, tap ({"target":{"automationId"|"text",
"role"?,"ancestorAutomationId"?}} or "x","y" 0-1, hit-tested), type ("value", a target or
the focused field, "replaceExisting"), swipe ("x","y","endX","endY"), pinch ("x","y",
"scale"), back, batch ("commands": 1-32, stopping at the first failure) or exit. Unknown
members are refused (invalid_request) and the interaction goes on; exit or the end of the
input detaches, leaving the app and the host running. Actions are the app's own
ui.perform_action; task commands (the official CLI's repository tasks) are not supported.`,
		Example: `  printf '%s\n' '{"id":"1","command":"tap","target":{"automationId":"addNoteButton"}}' \
    '{"id":"2","command":"type","target":{"automationId":"titleField"},"value":"Milk"}' \
    '{"id":"3","command":"exit"}' | ansight app interact --app-id com.ansight.demo.notes`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE: func(c *cobra.Command, args []string) error {
			return runInteract(c.Context(), g, c, &o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.session, "session", "", "the session to drive")
	f.StringVar(&o.sessionID, "session-id", "", "same as --session")
	f.StringVar(&o.app, "app", "", "drive the session of this app (when exactly one is connected)")
	f.StringVar(&o.appID, "app-id", "", "same as --app")
	f.StringVar(&o.repository, "repository", "", "the official CLI's task repository (tasks are not supported here)")
	f.BoolVar(&o.jsonl, "jsonl", true, "JSON Lines on standard output (the only output; accepted for the official CLI's scripts)")
	f.BoolVar(&o.screenshots, "screenshots", false, "take a screenshot after every command and name its file in the reply")
	f.IntVar(&o.timeoutMs, "timeout-ms", uiauto.DefaultCommandTimeoutMs, "bound each command, its capture included (100-60000)")
	f.IntVar(&o.taskTimeoutMs, "task-timeout-ms", 120000, "the official CLI's task bound (100-300000; tasks are not supported here)")
	f.DurationVar(&o.timeout, "timeout", 0, "how long each call to the app may take (default 20s, at most 1h)")
	return cmd
}

func runInteract(ctx context.Context, g *globals, c *cobra.Command, o *interactOptions, args []string) error {
	fl := c.Flags()
	if fl.Changed("session") && fl.Changed("session-id") || fl.Changed("app") && fl.Changed("app-id") {
		return usageErrorf("use only one spelling: --session or --session-id, --app or --app-id")
	}
	if (o.session != "" || o.sessionID != "") && (o.app != "" || o.appID != "" || len(args) > 0) {
		return usageErrorf("use a session target or an app target, not both")
	}
	if o.timeoutMs < 100 || o.timeoutMs > 60000 {
		return usageErrorf("--timeout-ms must be between 100 and 60000")
	}
	if o.taskTimeoutMs < 100 || o.taskTimeoutMs > 300000 {
		return usageErrorf("--task-timeout-ms must be between 100 and 300000")
	}
	callTimeout, err := timeoutMS(o.timeout)
	if err != nil {
		return err
	}
	sel := sessionSelector{appID: o.app + o.appID}
	if id := o.session + o.sessionID; id != "" {
		args = []string{id}
	}
	b, id, err := g.session(ctx, &sel, args)
	if err != nil {
		return err
	}
	opts := uiauto.InteractOptions{
		SessionID: id, TimeoutMs: o.timeoutMs, Repository: o.repository,
		Call: hostapi.Caller(b, id, callTimeout),
		// The host resolves each command's selector: one request per action.
		Run: func(ctx context.Context, req uiauto.Request) (*uiauto.Outcome, error) {
			op, err := b.UI(ctx, id, hostapi.UIRequest{Request: req, CallTimeoutMS: callTimeout})
			if err != nil {
				return nil, err
			}
			return &op.Outcome, nil
		},
	}
	if o.screenshots {
		opts.Screenshot = func(ctx context.Context) (*uiauto.InteractionShot, error) {
			return interactionShot(ctx, b, id, callTimeout)
		}
	}
	return hostErr(uiauto.Interact(ctx, g.env.Stdin, g.env.Stdout, opts))
}

// interactionShot takes a screenshot and names the file the host saved it in; an app
// without screenshots gives none.
func interactionShot(ctx context.Context, b hostapi.Backend, id string, timeoutMS int64) (*uiauto.InteractionShot, error) {
	res, err := b.Call(ctx, id, hostapi.CallRequest{ToolID: wire.ScreenshotToolID,
		Arguments: jsontext.Value(`{"format":"jpeg","quality":80}`), TimeoutMS: timeoutMS}, nil)
	if err != nil {
		return nil, err
	}
	if !res.Success || res.Result == nil {
		return nil, nil
	}
	var shot struct {
		TransferID    string    `json:"transferId"`
		CapturedAtUtc time.Time `json:"capturedAtUtc"`
		Width         int       `json:"width"`
		Height        int       `json:"height"`
	}
	if json.Unmarshal(res.Result.Result, &shot) != nil {
		return nil, nil
	}
	for _, a := range res.Artifacts {
		if a.Status == "complete" && a.TransferID == shot.TransferID {
			return &uiauto.InteractionShot{FrameID: shot.TransferID, ArtifactPath: a.Path, CapturedAtUtc: shot.CapturedAtUtc,
				Width: shot.Width, Height: shot.Height}, nil
		}
	}
	return nil, nil
}

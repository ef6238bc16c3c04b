package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// Ids of the standard UI tools.
const (
	GetVisualTreeToolID = wire.VisualTreeToolID // "ui.get_visual_tree"
	QueryNodesToolID    = "ui.query_nodes"
	PerformActionToolID = "ui.perform_action"
	WaitToolID          = "ui.wait"
	GetScreenshotToolID = wire.ScreenshotToolID // "ui.get_screenshot"
)

// DefaultSource is the source name of a screen unless Options.Source says otherwise.
const DefaultSource = "native"

// DefaultMaxNodes bounds a captured tree unless Options.MaxNodes says otherwise.
const DefaultMaxNodes = 10000

// Options configures the toolkit. The zero value is ready to use.
type Options struct {
	// Source names the screen's tree in snapshot ids and references (DefaultSource when
	// empty): "native", or "maui", "react", "flutter", "dom" for framework adapters.
	Source string
	// MaxNodes refuses captures with more nodes (DefaultMaxNodes when ≤ 0): a runaway
	// tree fails the call with ui_capture_failed instead of producing a huge result.
	MaxNodes int
	// Now gives capture times (capturedAtUtc, screenshot file names). Default time.Now.
	Now func() time.Time
	// IDs returns the random part of snapshot ids ("native:<revision>:<IDs()>"). The
	// default draws 32 random hex digits, so a reference cannot be forged; tests pin it for
	// reproducible transcripts.
	IDs func() string
}

// Register adds the five standard UI tools over s to a: ui.get_visual_tree, ui.query_nodes,
// ui.wait and ui.get_screenshot (read) and ui.perform_action (write, exclusive: actions
// never interleave). Call it once, before serving: it stops at the first tool that cannot
// be registered (one with the same id exists already), leaving the ones before it.
func Register(a *app.App, s Screen, opts Options) error {
	if a == nil || s == nil {
		return errors.New("ui: Register needs an app and a screen")
	}
	if opts.Source == "" {
		opts.Source = DefaultSource
	}
	if err := catalog.CheckID(opts.Source); err != nil {
		return fmt.Errorf("ui: source %q is not a plain name: %w", opts.Source, err)
	}
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = DefaultMaxNodes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &toolkit{screen: s, source: opts.Source, store: newStore(opts.MaxNodes, opts.IDs), now: opts.Now}
	sc := buildSchemas(opts.Source)
	def := func(id, name, description, keywords string, policy wire.Policy, args, result []byte) catalog.Definition {
		return catalog.Definition{ID: id, Name: name, Description: description, Category: "ui",
			Policy: policy, ArgumentsSchema: args, ResultSchema: result, Keywords: keywords}
	}
	registrations := []func() error{
		func() error {
			return app.Register(a, def(GetVisualTreeToolID, "Get visual tree",
				"Captures the current UI tree of the screen as a new snapshot: every node with its id, type, role, "+
					"label/text, supported actions, visibility, enabled state and bounds. Use ui.query_nodes to find "+
					"nodes and get references for ui.perform_action.",
				"ui visual tree hierarchy screen nodes elements snapshot inspect", wire.PolicyRead, sc.treeArgs, sc.treeResult),
				func(ctx context.Context, _ *app.Call, in treeArgs) (*treeResult, error) { return t.visualTree(ctx, in) })
		},
		func() error {
			return app.Register(a, def(QueryNodesToolID, "Query UI nodes",
				"Finds nodes of the screen by automation id, role, type, text, supported action, visibility or "+
					"enabled state. Captures a fresh snapshot unless snapshotId names a retained one. Every match "+
					"carries a reference for ui.perform_action, valid until the next capture.",
				"ui find search query nodes elements reference automationId role text", wire.PolicyRead, sc.queryArgs, sc.queryResult),
				func(ctx context.Context, _ *app.Call, in queryArgs) (*queryResult, error) {
					return t.queryNodes(ctx, in)
				})
		},
		func() error {
			return app.Register(a, def(PerformActionToolID, "Perform UI action",
				"Acts on one node, addressed by a reference from the latest ui.query_nodes or ui.get_visual_tree "+
					"capture: tap, focus, setValue, typeText, toggle, select, or another action the node supports. "+
					"A reference from an older capture fails with stale_node_reference; query again.",
				"ui tap click press type text input toggle select focus action", wire.PolicyWrite, sc.actionArgs, sc.actionResult),
				func(ctx context.Context, _ *app.Call, in actionArgs) (map[string]any, error) {
					return t.performAction(ctx, in)
				},
				app.WithExclusive())
		},
		func() error {
			return app.Register(a, def(WaitToolID, "Wait for UI",
				"Captures the screen repeatedly until a condition on the nodes matching the filters holds "+
					"(exists, notExists, visible, enabled), or fails with ui_wait_timeout.",
				"ui wait poll until appear disappear visible enabled", wire.PolicyRead, sc.waitArgs, sc.waitResult),
				func(ctx context.Context, _ *app.Call, in waitArgs) (*waitResult, error) { return t.wait(ctx, in) })
		},
		func() error {
			return app.Register(a, def(GetScreenshotToolID, "Get screenshot",
				"Renders the current screen as a PNG or JPEG image. The result carries the image size and an "+
					"ASFT transfer descriptor; the image bytes follow the result as binary frames.",
				"ui screenshot image capture png jpeg picture screen", wire.PolicyRead, sc.screenshotArgs, sc.shotResult),
				func(ctx context.Context, c *app.Call, in screenshotArgs) (*screenshotResult, error) {
					return t.screenshot(ctx, in, c.SendArtifact)
				})
		},
	}
	for _, register := range registrations {
		if err := register(); err != nil {
			return fmt.Errorf("ui: %w", err)
		}
	}
	return nil
}

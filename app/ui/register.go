package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"

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
	InspectNodeToolID   = "ui.inspect_node"
	ShowOverlayToolID   = "ui.show_overlay"
	UpdateOverlayToolID = "ui.update_overlay"
	RemoveOverlayToolID = "ui.remove_overlay"
	ClearOverlaysToolID = "ui.clear_overlays"
	GetOverlayToolID    = "ui.get_overlay"
	QueryOverlaysToolID = "ui.query_overlays"
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
	// IDs returns the random part of snapshot ids ("native:<revision>:<IDs()>") and the
	// ids of overlays shown without one. The default draws 32 random hex digits, so a
	// reference cannot be forged; tests pin it for reproducible transcripts.
	IDs func() string
	// Platform is the runtime platform the tools report ("linux", "macos", "windows", …);
	// the process's OS by default.
	Platform string
	// Taps receives the taps ui.perform_action performs (nil: none are reported); pass
	// the app's *telemetry.Telemetry so that recordings show them.
	Taps TapRecorder
}

// Register adds the standard UI tools over s to a: ui.get_visual_tree, ui.query_nodes,
// ui.inspect_node, ui.wait and ui.get_screenshot (read), ui.perform_action (write,
// exclusive: actions never interleave), and the overlay tools ui.show_overlay,
// ui.update_overlay, ui.remove_overlay, ui.clear_overlays (write), ui.get_overlay and
// ui.query_overlays (read). Overlays are drawn into the screenshots; pass an
// [OverlayScreen] as s to draw them into the app's other frames too. Call it once, before
// serving: it stops at the first tool that cannot be registered (one with the same id
// exists already), leaving the ones before it.
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
	if opts.IDs == nil {
		opts.IDs = randomHex
	}
	if opts.Platform == "" {
		opts.Platform = platform()
	}
	screen, ok := s.(*OverlayScreen)
	if !ok {
		screen = NewOverlayScreen(s)
	}
	screen.mu.Lock()
	screen.now = opts.Now // the toolkit's clock decides when overlays expire
	screen.mu.Unlock()
	t := &toolkit{screen: screen, source: opts.Source, platform: opts.Platform, store: newStore(opts.MaxNodes, opts.IDs),
		now: opts.Now, ids: opts.IDs, taps: opts.Taps}
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
				func(ctx context.Context, _ *app.Call, in treeArgs) (jsontext.Value, error) {
					return t.visualTree(ctx, in)
				})
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
	registrations = append(registrations,
		func() error {
			return app.Register(a, def(InspectNodeToolID, "Inspect UI node",
				"Describes one node of the latest snapshot (or of a fresh capture when no snapshotId is given): its "+
					"members in the compact v2 form, its type, and on request its ancestors and descendants.",
				"ui node inspect details ancestors descendants properties", wire.PolicyRead, sc.inspectArgs, sc.inspectResult),
				func(ctx context.Context, _ *app.Call, in inspectArgs) (*inspectResult, error) {
					return t.inspectNode(ctx, in)
				})
		},
		func() error {
			return app.Register(a, def(ShowOverlayToolID, "Show overlay",
				"Draws an input-transparent diagnostic overlay over the screen — a node's bounds or rectangles — "+
					"that shows in screenshots and the live screen until it expires (durationMs, 5 s by default) or is removed.",
				"ui overlay highlight box rectangle diagnostic point", wire.PolicyWrite, sc.showOverlayArgs, sc.overlayResult),
				func(ctx context.Context, _ *app.Call, in showArgs) (*overlayResult, error) {
					return t.showOverlay(ctx, in)
				})
		},
		func() error {
			return app.Register(a, def(UpdateOverlayToolID, "Update overlay",
				"Changes a live overlay's geometry, style, lifetime or metadata; omitted arguments keep their value.",
				"ui overlay highlight update move restyle", wire.PolicyWrite, sc.updateOverlayArgs, sc.overlayResult),
				func(ctx context.Context, _ *app.Call, in updateArgs) (*overlayResult, error) {
					return t.updateOverlay(ctx, in)
				})
		},
		func() error {
			return app.Register(a, def(RemoveOverlayToolID, "Remove overlay", "Removes a live overlay by id.",
				"ui overlay highlight remove hide", wire.PolicyWrite, sc.overlayIDArgs, sc.removeOverlayResult),
				func(_ context.Context, _ *app.Call, in overlayIDArgs) (*removeResult, error) {
					return t.removeOverlay(in)
				})
		},
		func() error {
			return app.Register(a, def(ClearOverlaysToolID, "Clear overlays",
				"Removes every live overlay, or those whose metadata has metadataKey (with metadataValue).",
				"ui overlay highlight clear remove all", wire.PolicyWrite, sc.overlayQueryArgs, sc.overlaysResult),
				func(_ context.Context, _ *app.Call, in overlayQueryArgs) (*overlaysResult, error) {
					return t.overlays(in, true)
				})
		},
		func() error {
			return app.Register(a, def(GetOverlayToolID, "Get overlay", "Returns a live overlay's geometry, style and metadata.",
				"ui overlay highlight inspect metadata", wire.PolicyRead, sc.overlayIDArgs, sc.overlayResult),
				func(_ context.Context, _ *app.Call, in overlayIDArgs) (*overlayResult, error) {
					return t.getOverlay(in)
				})
		},
		func() error {
			return app.Register(a, def(QueryOverlaysToolID, "Query overlays",
				"Lists the live overlays, or those whose metadata has metadataKey (with metadataValue).",
				"ui overlay highlight list query metadata", wire.PolicyRead, sc.overlayQueryArgs, sc.overlaysResult),
				func(_ context.Context, _ *app.Call, in overlayQueryArgs) (*overlaysResult, error) {
					return t.overlays(in, false)
				})
		},
	)
	for _, register := range registrations {
		if err := register(); err != nil {
			return fmt.Errorf("ui: %w", err)
		}
	}
	return nil
}

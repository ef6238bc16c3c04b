package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/wire"
)

// Tool failure codes of the toolkit besides the protocol's stale_node_reference,
// ui_action_not_supported and ui_wait_timeout.
const (
	CodeSourceNotSupported wire.Code = "ui_source_not_supported" // the screen has no such source
	CodeNodeNotFound       wire.Code = "ui_node_not_found"       // rootNodeId is not in the capture
	CodeCaptureFailed      wire.Code = "ui_capture_failed"       // Screen.Capture failed or its tree is invalid
	CodeActionValueInvalid wire.Code = "ui_action_value_invalid" // Screen.Perform reported ErrInvalidValue
	CodeActionFailed       wire.Code = "ui_action_failed"        // Screen.Perform failed otherwise
	CodeScreenshotFailed   wire.Code = "ui_screenshot_failed"    // Screen.Render or encoding failed
	// CodeActionReferenceRequired: ui.perform_action got neither a reference nor a
	// snapshotId and a nodeId (the official SDKs' code).
	CodeActionReferenceRequired wire.Code = "ui_action_reference_required"
)

// Argument defaults and bounds (the schemas publish the same numbers).
const (
	defaultMaxResults  = 50
	maxMaxResults      = 500
	defaultWaitTimeout = 5000
	maxWaitTimeout     = 60000
	defaultWaitPoll    = 100
	minWaitPoll        = 10
	maxWaitPoll        = 5000
	defaultJPEGQuality = 90
	maxScreenshotSide  = 16384
)

// toolkit runs the standard tools over one Screen. It holds no goroutines: overlays
// expire when a call or a frame looks at them.
type toolkit struct {
	screen   *OverlayScreen
	source   string
	platform string
	store    *store
	now      func() time.Time
	ids      func() string
	taps     TapRecorder // Options.Taps
}

// checkSource accepts the screen's own source (or none).
func (t *toolkit) checkSource(source string) error {
	if source == "" || source == t.source {
		return nil
	}
	return toolError(CodeSourceNotSupported,
		fmt.Sprintf("source %q is not captured by this app (supported: %q)", source, t.source),
		map[string]any{"source": source, "supportedSources": []string{t.source}})
}

// capture takes a fresh snapshot.
func (t *toolkit) capture(ctx context.Context, source string) (*snapshot, error) {
	if err := t.checkSource(source); err != nil {
		return nil, err
	}
	root, err := t.screen.Capture(ctx)
	if err != nil {
		return nil, screenError(CodeCaptureFailed, "capturing the screen failed", err)
	}
	snap, err := t.store.add(t.source, root, t.now())
	if err != nil {
		return nil, toolError(CodeCaptureFailed, err.Error(), nil)
	}
	return snap, nil
}

// screenError turns a Screen failure into a tool failure: a *wire.Error passes through,
// context errors stay Go errors (the call was cancelled), anything else gets code.
func screenError(code wire.Code, msg string, err error) error {
	var we *wire.Error
	switch {
	case errors.As(err, &we):
		return we
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return toolError(code, msg+": "+err.Error(), nil)
}

// --- ui.get_visual_tree ---

// details are the arguments that choose the optional parts of nodes.
type details struct {
	IncludeBounds *bool `json:"includeBounds,omitzero"`
	// IncludeComputedStyles is the official host's name (it sends false by default),
	// IncludeProperties the one of the official SDKs' framework trees: both ask for the
	// nodes' Properties.
	IncludeComputedStyles bool `json:"includeComputedStyles,omitzero"`
	IncludeProperties     bool `json:"includeProperties,omitzero"`
}

func (d *details) detail() detail {
	return detail{bounds: d.IncludeBounds == nil || *d.IncludeBounds, properties: d.IncludeComputedStyles || d.IncludeProperties}
}

// pages are the official capture options that choose a framework's root scope and
// inactive pages (MAUI's). A Screen captures the one window it shows, which is its current
// page: every root scope names that same tree, and there are no inactive pages to
// include. Both are accepted so that a caller's options never fail, root is checked
// against the scopes the official SDKs name, and the tree says which scope it answers.
type pages struct {
	Root                 string `json:"root,omitzero"`
	IncludeInactivePages bool   `json:"includeInactivePages,omitzero"`
}

// rootScopes are the root scopes accepted, by lower-cased name.
var rootScopes = map[string]string{"window": "window", "currentpage": "currentPage", "rootpage": "rootPage", "page": "currentPage"}

// scope is the root scope the tree reports ("" when the caller named none).
func (p *pages) scope() (string, error) {
	if p.Root == "" {
		return "", nil
	}
	if s, ok := rootScopes[strings.ToLower(strings.TrimSpace(p.Root))]; ok {
		return s, nil
	}
	return "", toolError(wire.CodeArgumentsInvalid,
		fmt.Sprintf("ui: root %q is not a root scope (window, currentPage, rootPage)", p.Root), map[string]any{"root": p.Root})
}

type treeArgs struct {
	Source string `json:"source,omitzero"`
	details
	scope
	pages
}

func (t *toolkit) visualTree(ctx context.Context, a treeArgs) (jsontext.Value, error) {
	rootScope, err := a.pages.scope()
	if err != nil {
		return nil, err
	}
	snap, err := t.capture(ctx, a.Source)
	if err != nil {
		return nil, err
	}
	root := snap.root
	if a.RootNodeID != "" {
		if root = snap.byID[a.RootNodeID]; root == nil {
			return nil, nodeNotFound(snap, a.RootNodeID)
		}
	}
	maxDepth := clampOr(a.MaxDepth, maxTreeDepth, 0, maxTreeDepth)
	maxNodes := clampOr(a.MaxNodes, len(snap.nodes), 1, len(snap.nodes))
	out, count, truncated := project(root, maxDepth, maxNodes, a.detail())
	return compact(t.treeOf(snap, out, count, truncated, rootScope)), nil
}

// --- ui.query_nodes ---

// captureArgs are the arguments ui.query_nodes and ui.wait share with the official SDKs
// besides the filter: what to include of each match, which part of the tree to search and
// how many matches to list.
type captureArgs struct {
	details
	scope
	MaxResults *int `json:"maxResults,omitzero"`
	pages
}

// search runs the filter over the part of snap the arguments select.
func (c *captureArgs) search(snap *snapshot, f *filter) (*queryResult, error) {
	if _, err := c.pages.scope(); err != nil {
		return nil, err
	}
	nodes, err := c.nodes(snap)
	if err != nil {
		return nil, err
	}
	return snap.query(nodes, f, clampOr(c.MaxResults, defaultMaxResults, 1, maxMaxResults), c.detail()), nil
}

type queryArgs struct {
	Source     string `json:"source,omitzero"`
	SnapshotID string `json:"snapshotId,omitzero"`
	filter
	captureArgs
}

func (t *toolkit) queryNodes(ctx context.Context, a queryArgs) (*queryResult, error) {
	var snap *snapshot
	if a.SnapshotID != "" {
		if err := t.checkSource(a.Source); err != nil {
			return nil, err
		}
		var ok bool
		if snap, ok = t.store.get(a.SnapshotID); !ok || snap.source != t.source {
			return nil, t.store.stale(Reference{Source: t.source, SnapshotID: a.SnapshotID}, staleUnknownSnapshot)
		}
	} else {
		var err error
		if snap, err = t.capture(ctx, a.Source); err != nil {
			return nil, err
		}
	}
	return a.search(snap, &a.filter)
}

// --- ui.perform_action ---

type actionArgs struct {
	Reference *Reference `json:"reference,omitzero"`
	// Source, SnapshotID and NodeID address the node without a reference object, as the
	// official SDKs allow; each one given overrides the reference's.
	Source     string         `json:"source,omitzero"`
	SnapshotID string         `json:"snapshotId,omitzero"`
	NodeID     string         `json:"nodeId,omitzero"`
	Action     string         `json:"action"`
	Value      jsontext.Value `json:"value,omitzero"`
	// Index (select, selectTab) and Checked are the official SDKs' typed values, used when
	// value is absent.
	Index   jsontext.Value `json:"index,omitzero"`
	Checked jsontext.Value `json:"checked,omitzero"`
	Options map[string]any `json:"options,omitzero"`
}

// target returns the reference the arguments address. The revision of a reference built
// from a bare snapshotId is the one of that snapshot, if it is still retained.
func (a *actionArgs) target(s *store) (Reference, error) {
	var ref Reference
	if a.Reference != nil {
		ref = *a.Reference
	}
	if a.SnapshotID != "" && a.SnapshotID != ref.SnapshotID {
		ref.SnapshotID, ref.Revision = a.SnapshotID, 0
		if snap, ok := s.get(a.SnapshotID); ok {
			ref.Revision = snap.revision
			if ref.Source == "" {
				ref.Source = snap.source
			}
		}
	}
	if a.Source != "" {
		ref.Source = a.Source
	}
	if a.NodeID != "" {
		ref.NodeID = a.NodeID
	}
	if ref.SnapshotID == "" || ref.NodeID == "" {
		return ref, toolError(CodeActionReferenceRequired,
			"ui.perform_action needs a reference, or both snapshotId and nodeId, from the latest "+QueryNodesToolID, nil)
	}
	if ref.Source == "" { // an unknown snapshot named without a source
		ref.Source, _, _ = strings.Cut(ref.SnapshotID, ":")
	}
	return ref, nil
}

// value is the action's value: value, else index, else checked (JSON null is none).
func (a *actionArgs) value() (any, error) {
	for _, raw := range []jsontext.Value{a.Value, a.Index, a.Checked} {
		if len(raw) == 0 || raw.Kind() == 'n' {
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, toolError(wire.CodeArgumentsInvalid, "ui: value: "+err.Error(), nil)
		}
		return v, nil
	}
	return nil, nil
}

func (t *toolkit) performAction(ctx context.Context, a actionArgs) (map[string]any, error) {
	ref, err := a.target(t.store)
	if err != nil {
		return nil, err
	}
	snap, node, err := t.store.resolve(ref)
	if err != nil {
		return nil, err
	}
	notSupported := func(why string) error {
		return toolError(wire.CodeUIActionNotSupported,
			fmt.Sprintf("node %q (%s) %s", node.ID, node.Type, why),
			map[string]any{
				"nodeId":           node.ID,
				"action":           a.Action,
				"supportedActions": node.treeNode(detail{}).Actions,
				"enabled":          !node.Disabled,
			})
	}
	if !node.supports(a.Action) {
		return nil, notSupported(fmt.Sprintf("does not support action %q", a.Action))
	}
	if node.Disabled {
		return nil, notSupported("is disabled")
	}
	value, err := a.value()
	if err != nil {
		return nil, err
	}
	outcome, err := t.screen.Perform(ctx, node.ID, Action{Name: a.Action, Value: value, Options: a.Options})
	switch {
	case err == nil:
	case errors.Is(err, ErrNodeNotFound):
		return nil, t.store.stale(ref, staleNodeGone)
	case errors.Is(err, ErrActionNotSupported):
		return nil, notSupported(err.Error())
	case errors.Is(err, ErrInvalidValue):
		return nil, toolError(CodeActionValueInvalid, err.Error(),
			map[string]any{"nodeId": node.ID, "action": a.Action})
	default:
		return nil, screenError(CodeActionFailed, fmt.Sprintf("action %q on node %q failed", a.Action, node.ID), err)
	}
	t.recordTap(ctx, snap, node, a.Action)
	// The provider's outcome comes first; the toolkit's own keys win over same-named ones.
	// A secure node's text never leaves the app, not even in what the screen answers.
	result := make(map[string]any, len(outcome)+3)
	for k, v := range outcome {
		if node.Secure && (k == "text" || k == "value") {
			continue
		}
		result[k] = v
	}
	result["source"] = ref.Source
	result["action"] = a.Action
	result["reference"] = ref
	return result, nil
}

// --- ui.wait ---

type waitArgs struct {
	Source string `json:"source,omitzero"`
	// SnapshotID is accepted and ignored: every poll captures the screen afresh, as in the
	// official SDKs.
	SnapshotID string `json:"snapshotId,omitzero"`
	filter
	captureArgs
	Condition           string `json:"condition"`
	TimeoutMilliseconds *int   `json:"timeoutMilliseconds,omitzero"`
	PollMilliseconds    *int   `json:"pollMilliseconds,omitzero"`
}

// Conditions of ui.wait.
const (
	conditionExists    = "exists"
	conditionNotExists = "notExists"
	conditionVisible   = "visible"
	conditionEnabled   = "enabled"
)

type waitResult struct {
	Condition           string       `json:"condition"`
	Matched             bool         `json:"matched"`
	ElapsedMilliseconds int64        `json:"elapsedMilliseconds"`
	Query               *queryResult `json:"query"`
}

// holds evaluates a wait condition over every match of f among nodes (not only the
// listed ones).
func holds(condition string, nodes []*Node, f *filter) bool {
	found := false
	for _, n := range nodes {
		if !f.matches(n) {
			continue
		}
		switch condition {
		case conditionExists, conditionNotExists:
			found = true
		case conditionVisible:
			found = !n.Hidden
		case conditionEnabled:
			found = !n.Disabled
		}
		if found {
			break
		}
	}
	if condition == conditionNotExists {
		return !found
	}
	return found
}

// clampOr returns def when p is nil, else *p clamped to lo..hi.
func clampOr(p *int, def, lo, hi int) int {
	if p == nil {
		return def
	}
	return max(lo, min(*p, hi))
}

func (t *toolkit) wait(ctx context.Context, a waitArgs) (*waitResult, error) {
	switch a.Condition {
	case conditionExists, conditionNotExists, conditionVisible, conditionEnabled:
	default:
		return nil, toolError(wire.CodeArgumentsInvalid, fmt.Sprintf("ui: unknown wait condition %q", a.Condition), nil)
	}
	timeout := time.Duration(clampOr(a.TimeoutMilliseconds, defaultWaitTimeout, 1, maxWaitTimeout)) * time.Millisecond
	poll := time.Duration(clampOr(a.PollMilliseconds, defaultWaitPoll, minWaitPoll, maxWaitPoll)) * time.Millisecond

	start := time.Now()
	deadline := start.Add(timeout)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		snap, err := t.capture(ctx, a.Source)
		if err != nil {
			return nil, err
		}
		elapsed := time.Since(start).Milliseconds()
		nodes, err := a.nodes(snap)
		if err != nil {
			return nil, err
		}
		if holds(a.Condition, nodes, &a.filter) {
			q, _ := a.search(snap, &a.filter) // the scope resolved above
			return &waitResult{Condition: a.Condition, Matched: true, ElapsedMilliseconds: elapsed, Query: q}, nil
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			q, _ := a.search(snap, &a.filter)
			return nil, toolError(wire.CodeUIWaitTimeout,
				fmt.Sprintf("condition %q did not hold within %d ms", a.Condition, timeout.Milliseconds()),
				map[string]any{
					"condition":           a.Condition,
					"matched":             false,
					"elapsedMilliseconds": elapsed,
					"timeoutMilliseconds": timeout.Milliseconds(),
					"lastQuery":           q,
				})
		}
		if timer == nil {
			timer = time.NewTimer(min(poll, remaining))
		} else {
			timer.Reset(min(poll, remaining))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// --- ui.get_screenshot ---

type screenshotArgs struct {
	Format   string `json:"format,omitzero"`
	Quality  *int   `json:"quality,omitzero"`
	MaxWidth *int   `json:"maxWidth,omitzero"`
	// AfterScreenUpdates waits for the Screen's pending updates (UpdateAwaiter) first.
	AfterScreenUpdates bool `json:"afterScreenUpdates,omitzero"`
	// AnnotateNodeIDs asks for node ids drawn over the image; the toolkit does not draw
	// them and says so with annotationApplied:false, as an official SDK that cannot.
	AnnotateNodeIDs bool `json:"annotateNodeIds,omitzero"`
}

type screenshotResult struct {
	Platform          string    `json:"platform"`
	Format            string    `json:"format"`
	Width             int       `json:"width"`
	Height            int       `json:"height"`
	CapturedAtUtc     time.Time `json:"capturedAtUtc"`
	AnnotationApplied bool      `json:"annotationApplied"`
	wire.TransferDescriptor
}

// sendFunc hands an artifact to the runtime for streaming after the response.
type sendFunc func(name, mimeType string, size int64, r io.Reader, opts ...app.ArtifactOption) wire.TransferDescriptor

func (t *toolkit) screenshot(ctx context.Context, a screenshotArgs, send sendFunc) (*screenshotResult, error) {
	format := a.Format
	if format == "" {
		format = "png"
	}
	if format != "png" && format != "jpeg" { // the schema's enum; checked again for safety
		return nil, toolError(wire.CodeArgumentsInvalid, fmt.Sprintf("ui: screenshot format %q is not png or jpeg", a.Format), nil)
	}
	if a.AfterScreenUpdates {
		if err := t.screen.AwaitUpdates(ctx); err != nil {
			return nil, screenError(CodeScreenshotFailed, "waiting for the screen's pending updates failed", err)
		}
	}
	img, err := t.screen.Render(ctx)
	if err != nil {
		return nil, screenError(CodeScreenshotFailed, "rendering the screen failed", err)
	}
	at := t.now().UTC()
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 || b.Dx() > maxScreenshotSide || b.Dy() > maxScreenshotSide {
		return nil, toolError(CodeScreenshotFailed, fmt.Sprintf("the screen rendered a %dx%d image", b.Dx(), b.Dy()), nil)
	}
	if w := clampOr(a.MaxWidth, b.Dx(), 1, maxScreenshotSide); b.Dx() > w {
		img = scaleToWidth(img, w)
		b = img.Bounds()
	}
	var buf bytes.Buffer
	ext, mime := "png", "image/png"
	if format == "jpeg" {
		ext, mime = "jpg", "image/jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: clampOr(a.Quality, defaultJPEGQuality, 1, 100)})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	if err != nil {
		return nil, toolError(CodeScreenshotFailed, "encoding the screenshot failed: "+err.Error(), nil)
	}
	name := fmt.Sprintf("screenshot-%s%03d.%s", at.Format("20060102-150405"), at.Nanosecond()/1e6, ext)
	size := int64(buf.Len())
	return &screenshotResult{
		Platform:           t.platform,
		Format:             format,
		Width:              b.Dx(),
		Height:             b.Dy(),
		CapturedAtUtc:      at,
		TransferDescriptor: send(name, mime, size, &buf),
	}, nil
}

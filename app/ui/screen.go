package ui

import (
	"context"
	"errors"
	"image"
)

// Screen is what an app (or a UI-framework adapter) implements to get the standard UI
// tools. Methods may be called concurrently, from the goroutines of tool calls; an
// implementation synchronises with its UI thread as it needs to.
type Screen interface {
	// Capture returns the current tree of the screen. The toolkit copies it, so the
	// result may share nothing with later captures (and need not be immutable).
	Capture(ctx context.Context) (*Node, error)

	// Perform applies act to the live node with id nodeID and returns what the provider
	// wants to report (merged into the tool result; may be nil). The toolkit has already
	// checked that the node is in the latest snapshot, is enabled and lists act.Name.
	// Perform returns an error wrapping ErrNodeNotFound when the node is no longer on
	// screen, ErrActionNotSupported when it cannot take the action after all, and
	// ErrInvalidValue when act.Value does not fit; a *wire.Error is passed through as
	// the tool failure.
	Perform(ctx context.Context, nodeID string, act Action) (map[string]any, error)

	// Render draws the current screen. Bounds of the returned image are the screenshot's
	// size in pixels.
	Render(ctx context.Context) (image.Image, error)
}

// Action is one ui.perform_action request as a Screen receives it.
type Action struct {
	// Name is the action, one of the node's supported actions (e.g. ActionTap).
	Name string
	// Value is the action's argument as decoded from JSON: a string, a float64, a bool,
	// or nil when the caller gave none. It is the call's value, else its index (a float64,
	// for select and selectTab), else its checked (a bool), as the official SDKs read them.
	Value any
	// Options are the caller's provider-specific action options (nil when none).
	Options map[string]any
}

// UpdateAwaiter is implemented by a Screen whose drawing can lag behind its state: a
// layout or animation pass still to run on the UI thread. ui.get_screenshot called with
// afterScreenUpdates:true calls AwaitUpdates before Render, so that the image shows every
// change made before the call (the official SDKs' Apple screenshots do the same). A Screen
// that renders its current state synchronously has no pending update and needs not
// implement it.
type UpdateAwaiter interface {
	// AwaitUpdates returns once the updates pending when it was called have been drawn,
	// or with ctx's error.
	AwaitUpdates(ctx context.Context) error
}

// Errors a Screen's Perform returns (wrapped or not) to select the tool failure code.
var (
	// ErrNodeNotFound: the node is gone from the live screen ⇒ stale_node_reference.
	ErrNodeNotFound = errors.New("ui: node not found on screen")
	// ErrActionNotSupported: the node cannot take the action ⇒ ui_action_not_supported.
	ErrActionNotSupported = errors.New("ui: action not supported")
	// ErrInvalidValue: the action's value is missing or of the wrong kind ⇒
	// ui_action_value_invalid.
	ErrInvalidValue = errors.New("ui: invalid action value")
)

package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// Handler runs a tool. It returns the result, which is written as the call's "result": a
// jsontext.Value is used as is (it must be valid JSON), nil is written as null, anything
// else is marshalled as JSON. A returned *wire.Error (see ToolErrorf) fails the call with
// its own code; any other error fails it with tool_execution_failed and the error's text.
// A panic fails the call with tool_execution_exception; the app keeps running.
//
// The context is cancelled when the connection the request came from goes away, and when
// the host gives the request up with tool.cancel (context.Cause is then ErrCancelled). It
// is not cancelled when the handler returns, and must not be used after that: Serve
// answers later requests with the same context while nothing cancels it, which saves
// each call two allocations.
type Handler func(ctx context.Context, c *Call) (any, error)

// Tool is a tool as registered with App.Register.
type Tool struct {
	// Definition is the static definition published in the catalog. Its schemas are
	// JSON Schema 2020-12 in the protocol's closed-object form; both are required.
	Definition catalog.Definition
	// Handler runs the tool; required.
	Handler Handler
	// Availability, when set, tells whether the tool can run in the app's current state.
	// It is evaluated on every catalog query and again immediately before every execution
	// (call, batch item, evidence); a result with Available false is published as the
	// tool's runtime object and refuses calls with its Code (tool_unavailable when empty).
	// It must be fast and must not block. Nil means always available.
	Availability func(ctx context.Context) wire.Runtime
	// Exclusive tools never run at the same time as each other (other tools still run
	// concurrently with them). Use it for tools that drive shared state such as the UI.
	Exclusive bool

	// resultConforms: the handler's results match the result schema by construction
	// (set by Register for plain result types, see conformsByConstruction).
	resultConforms bool
	// resultEncoder writes the handler's flat results without reflection (set by Register,
	// see flatEncoder); nil for other types.
	resultEncoder *flatEncoder
}

// ToolOption adjusts a typed tool registered with Register.
type ToolOption func(*Tool)

// WithAvailability sets the tool's availability function (see Tool.Availability).
func WithAvailability(f func(ctx context.Context) wire.Runtime) ToolOption {
	return func(t *Tool) { t.Availability = f }
}

// WithExclusive marks the tool exclusive (see Tool.Exclusive).
func WithExclusive() ToolOption {
	return func(t *Tool) { t.Exclusive = true }
}

// tool is a registered tool.
type tool struct {
	// cat is the checked definition, its compiled schemas (Args and Result, validated for
	// JSON tools only) and what catalogs publish of it, made when it was registered.
	cat          *catalog.Tool
	handler      Handler
	availability func(ctx context.Context) wire.Runtime
	exclusive    bool
	flattened    bool // argumentEncoding flattened-string
	// resultConforms: results need no validation but null (Tool.resultConforms).
	resultConforms bool
	resultEncoder  *flatEncoder // Tool.resultEncoder
}

// Register adds a tool. It fails when the definition is invalid (id, names, policy,
// encoding, schemas), when the handler is missing or when a tool with the same id is
// already registered. Tools can be registered while the app is serving; hosts see them in
// their next catalog.
func (a *App) Register(t Tool) error {
	d := t.Definition
	if t.Handler == nil {
		return fmt.Errorf("app: tool %q: no handler", d.ID)
	}
	// The catalog's part of the tool (its checked definition, compiled schemas, revision and
	// entries) is made once, here: the catalogs built afterwards (App.current) share it.
	ct, err := catalog.NewTool(d)
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	rt := &tool{
		cat:            ct,
		handler:        t.Handler,
		availability:   t.Availability,
		exclusive:      t.Exclusive,
		flattened:      d.ArgumentEncoding == wire.ArgumentEncodingFlattenedString,
		resultConforms: t.resultConforms,
		resultEncoder:  t.resultEncoder,
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.tools[d.ID]; dup {
		return fmt.Errorf("app: tool %q: %w", d.ID, ErrDuplicateTool)
	}
	a.tools[d.ID] = rt
	// Tools are mostly registered in id order (a generated or listed set): then the new
	// one goes last, else it is inserted where it sorts.
	if n := len(a.sorted); n == 0 || a.sorted[n-1].cat.Def.ID < d.ID {
		a.sorted = append(a.sorted, rt)
	} else {
		i, _ := slices.BinarySearchFunc(a.sorted, d.ID, func(t *tool, id string) int { return strings.Compare(t.cat.Def.ID, id) })
		a.sorted = slices.Insert(a.sorted, i, rt)
	}
	a.gen++
	a.toolsGen++
	return nil
}

// ErrDuplicateTool is returned (wrapped) by Register for an id that is already registered.
var ErrDuplicateTool = errors.New("a tool with this id is already registered")

package app

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// DefaultMaxConcurrent is how many requests Serve handles at once unless
// Options.MaxConcurrent says otherwise.
const DefaultMaxConcurrent = 16

// Options configures an App. The zero value is ready to use.
type Options struct {
	// Guard decides which tools are discoverable and executable. The zero Guard (no
	// MaxPolicy) means catalog.GuardReadWrite: read and write tools are published and
	// run, critical ones need an explicit catalog.GuardFullAccess. Use catalog.GuardDisabled
	// to start closed. The guard can be changed later with App.SetGuard.
	Guard catalog.Guard
	// MaxConcurrent bounds the requests Serve handles at the same time
	// (DefaultMaxConcurrent when ≤ 0). When the bound is reached, Serve stops reading until
	// a request finishes.
	MaxConcurrent int
	// Clock gives the time written into responses (sentAt, evaluatedAtUtc). Default
	// time.Now; tests pin it for reproducible transcripts.
	Clock func() time.Time
	// IDs returns fresh identifiers: ASFT transfer ids (32 lower-case hex digits, which the
	// protocol requires) and the suffix of tool.error ids for unreadable requests. Default
	// crypto-random hex; tests pin it for reproducible transcripts.
	IDs func() string
	// Logger receives diagnostics. Requests are logged at debug level (type, id, tool id,
	// outcome code), panics at error level; argument and result values are never logged.
	// Default: nothing is logged.
	Logger *slog.Logger
}

// App is the SDK runtime: a tool registry with its guard, and the dispatcher that answers
// tool requests. Its methods are safe for concurrent use.
type App struct {
	clock      func() time.Time
	ids        func() string
	log        *slog.Logger
	concurrent int

	// exclusive is a one-slot semaphore held while an exclusive tool runs.
	exclusive chan struct{}

	mu    sync.RWMutex
	tools map[string]*tool // every registered tool, by id
	// sorted is every registered tool in id order (byte order), kept so at registration
	// (Register): a catalog is built of the tools in that order (App.current), and sorting
	// the map's random order was a quarter of building a new app's first one.
	sorted   []*tool
	guard    catalog.Guard
	gen      uint64 // incremented on every registry or guard change
	toolsGen uint64 // incremented on every registry change

	// view caches the published catalog for generation view.gen; rebuilt lazily (under
	// build) so that registering many tools does not rebuild it many times.
	view  atomic.Pointer[view]
	build sync.Mutex

	extMu      sync.Mutex
	extensions map[any]any // App.Extension
}

// view is an immutable snapshot of what queries answer from.
type view struct {
	gen, toolsGen uint64
	guard         catalog.Guard
	set           *catalog.Set
	// gated lists the visible tools that have an availability function, sorted by id:
	// only they can be unavailable, so a query evaluates only them.
	gated []*tool
}

// New returns an App with no tools.
func New(opts Options) *App {
	a := &App{
		clock:      opts.Clock,
		ids:        opts.IDs,
		log:        opts.Logger,
		concurrent: opts.MaxConcurrent,
		exclusive:  make(chan struct{}, 1),
		tools:      make(map[string]*tool),
		guard:      opts.Guard,
	}
	if a.clock == nil {
		a.clock = time.Now
	}
	if a.ids == nil {
		a.ids = randomID
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.concurrent <= 0 {
		a.concurrent = DefaultMaxConcurrent
	}
	switch {
	case a.guard == (catalog.Guard{}):
		a.guard = catalog.GuardReadWrite
	case a.guard.Check() != nil:
		a.log.Error("app: invalid Options.Guard; starting with catalog.GuardDisabled", "err", a.guard.Check())
		a.guard = catalog.GuardDisabled
	}
	return a
}

// SetGuard replaces the guard (a preset such as catalog.GuardReadOnly, or a custom one).
// It applies to every request that starts afterwards; the catalog revision changes with
// it, so a host holding a cached catalog gets a full one on its next query. A guard whose
// MaxPolicy is not a valid policy is refused and the current guard stays.
func (a *App) SetGuard(g catalog.Guard) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.mu.Lock()
	a.guard = g
	a.gen++
	a.mu.Unlock()
	return nil
}

// Guard returns the current guard.
func (a *App) Guard() catalog.Guard {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.guard
}

// lookup returns a registered tool (visible or not) and the guard in force.
func (a *App) lookup(id string) (*tool, catalog.Guard) {
	a.mu.RLock()
	t, g := a.tools[id], a.guard
	a.mu.RUnlock()
	return t, g
}

// current returns the catalog snapshot of the current generation, building it if the
// registry or the guard changed since the last one.
func (a *App) current() (*view, error) {
	a.mu.RLock()
	gen := a.gen
	a.mu.RUnlock()
	if v := a.view.Load(); v != nil && v.gen == gen {
		return v, nil
	}
	a.build.Lock()
	defer a.build.Unlock()

	old := a.view.Load()
	a.mu.RLock()
	gen, toolsGen, g := a.gen, a.toolsGen, a.guard
	if old != nil && old.gen == gen {
		a.mu.RUnlock()
		return old, nil
	}
	var tools []*catalog.Tool
	reuse := old != nil && old.toolsGen == toolsGen // only the guard changed
	if !reuse {
		tools = make([]*catalog.Tool, 0, len(a.tools))
	}
	var gated []*tool
	for _, t := range a.sorted {
		if !reuse {
			tools = append(tools, t.cat)
		}
		if t.availability != nil && g.Visible(t.cat.Def.Policy) {
			gated = append(gated, t)
		}
	}
	a.mu.RUnlock()
	// gated is sorted by id already: a.sorted is.
	var set *catalog.Set
	var err error
	if reuse {
		set, err = old.set.WithGuard(g)
	} else {
		set, err = catalog.NewSetOf(tools, g)
	}
	if err != nil {
		return nil, err
	}
	v := &view{gen: gen, toolsGen: toolsGen, guard: g, set: set, gated: gated}
	a.view.Store(v)
	return v, nil
}

// Extension returns the value a keeps under key, made by create the first time it is
// asked for. Packages that add tools keep their per-app state here: registering twice then
// extends what the first registration published instead of failing on the tools' ids
// (app/files's artifact providers, for one). key should be a value of an unexported type
// of the calling package, so that no other package can reach the value.
func (a *App) Extension(key any, create func() any) any {
	a.extMu.Lock()
	defer a.extMu.Unlock()
	if v, ok := a.extensions[key]; ok {
		return v
	}
	if a.extensions == nil {
		a.extensions = map[any]any{}
	}
	v := create()
	a.extensions[key] = v
	return v
}

// newID returns a fresh identifier from Options.IDs.
func (a *App) newID() string { return a.ids() }

// newTransferID returns an id for an ASFT transfer: the next Options.IDs value when it has
// the protocol's form (32 lower-case hex digits), else a random one.
func (a *App) newTransferID() string {
	if id := a.ids(); isTransferID(id) {
		return id
	}
	return wire.NewTransferID()
}

func isTransferID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// randomID is the default Options.IDs: 32 random lower-case hex digits.
func randomID() string { return wire.NewTransferID() }

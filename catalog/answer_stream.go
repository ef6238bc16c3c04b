package catalog

import (
	"slices"
	"sync"

	"github.com/ansight-go/ansight/wire"
)

// A host that asks for the first L tools, then for the first L' (paging, a smaller limit,
// another client), gets answers that are the same text up to the last tool both list. The
// answers are kept per query (answerCache), so each new limit was a whole compression of
// up to half a megabyte: a quarter of the CPU of such a query, both ends counted. Instead
// each projection's answer text for the first wire.MaxQueryLimit visible tools is
// compressed once per Set (and availability state, for the index and full entries' runtime
// objects), cut at tool entries' ends every 16–64 KiB (wire.Stream); an answer that lists
// the first L visible tools reuses the compressed bytes up to the last cut at or before
// its L-th entry and compresses only what follows. The answer decodes to the same JSON as before
// (TestAnswerPayloadStream, FuzzAnswerPayloadStream).

// An answer stream is cut at entry ends chosen by the entries themselves (a hash of the
// tool's id), not at every 16 KiB: a catalog that changed by a few tools is then cut at
// the same entries as before away from the change, and each stretch between two cuts that
// lists the same tools as one of the last stream's, after the same window, is copied
// compressed from it (wire.NewStreamPieces: each stretch deflated with only the entries
// just before it as its window) instead of being compressed again. After the guard shows
// or hides a few tools, the app compresses the head's stretch and those the changes fall
// in or just before.

// minPiece and maxPiece bound the text between two cuts of an answer stream; past
// minPiece, each entry ends a stretch with the probability len(entry)/minPiece, so that a
// stretch is about 2 × minPiece whatever the entries' sizes. What an answer for another
// limit compresses of its own besides its end is at most a stretch. pieceWindow is how
// much of the text before a stretch its window holds, in whole entries: a stretch
// compressed from an empty window costs what its first entries cannot refer to (30 % more
// bytes for a thousand synthetic tools cut every 16 KiB, whose entries repeat with a
// period of ten), one with a window what compressing the window costs (about an eighth
// more CPU for a new stream at 4 KiB and 32 KiB stretches), and copying a stretch needs
// its window's entries unchanged too.
const (
	minPiece    = 16 << 10
	maxPiece    = 64 << 10
	pieceWindow = 4 << 10
	maxWindow   = 32 << 10 // what deflate refers back to
)

// cutAfter reports whether the stream is cut after t's entry of n bytes, when the
// stretch it ends holds minPiece bytes or more.
func cutAfter(t *Tool, n int) bool {
	h := uint64(14695981039346656037) // FNV-1a of the id: the same tools cut at the same ends
	for i := 0; i < len(t.Def.ID); i++ {
		h = (h ^ uint64(t.Def.ID[i])) * 1099511628211
	}
	h ^= h >> 29 // FNV's high bits mix the last bytes poorly
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	return h>>(64-14) < uint64(n) // 14 bits: minPiece
}

// answerStream is a projection's compressed answer text, for one availability state
// (the index and full entries carry runtime objects): the last one asked for.
type answerStream struct {
	mu    sync.Mutex
	avail *availability // nil for definitions
	built *builtStream
	// prev is the stream of the Set this one was made from (WithGuard), whose stretches
	// the first stream built here may copy; dropped then. It refers to no Set: a chain of
	// guard changes keeps no more than one.
	prev *builtStream
}

// builtStream is a compressed answer text and the tool count at each cut.
type builtStream struct {
	stream *wire.Stream
	cuts   []int // the text's length at each cut
	tools  []int // the entries before each cut
	// window[i] is the first entry of the window of the stretch that ends at cut i (the
	// first stretch has none).
	window []int
	// What the entries were written of: the tools (the Set's visible ones, shared), and
	// for the index and full entries the availability and whether the guard let tools
	// execute.
	listed    []*Tool
	avail     *availability
	guardExec bool
}

// streamOf returns the answer stream of a projection in the availability a (nil for
// definitions), compressing it when it is not the one kept: once per Set and projection
// while the availability does not change.
func (s *Set) streamOf(detail string, a *availability) (*builtStream, error) {
	as := &s.streams[projection(detail)]
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.built != nil && as.avail == a {
		return as.built, nil
	}
	prev := as.last()
	// The text of an answer that lists the first tools, as appendAnswer writes it, cut
	// at entry ends its entries choose (cutAfter).
	tools := s.visible[:min(len(s.visible), wire.MaxQueryLimit)]
	bs := &builtStream{listed: tools, avail: a, guardExec: s.guard.ExecutionEnabled}
	// The text is not kept (NewStream compresses it): a recycled buffer of about its size,
	// not one grown by doubling to half a megabyte per new Set (half the bytes a cold
	// answer allocated, both ends counted).
	buf := answerBuffers.Get()
	defer answerBuffers.Put(buf)
	size := len(s.head) + len(`,"tools":[`)
	for _, t := range tools {
		size += max(len(t.indexOpen), len(t.defsOpen)) + len(`,}`) + len(`,"executable":false`)
	}
	text := append(slices.Grow((*buf)[:0], size), s.head...)
	text = append(text, `,"tools":[`...)
	starts := make([]int, len(tools)+1) // where each entry starts, its comma included
	var windows []int
	last, w := 0, 0      // the last cut; the first entry of the last pieceWindow bytes
	next, nextAt := 0, 0 // the first entry of the next stretch's window, and where it starts
	for i, t := range tools {
		starts[i] = len(text)
		if i > 0 {
			text = append(text, ',')
		}
		text = appendEntry(text, t, detail, a, s.guard.ExecutionEnabled)
		starts[i+1] = len(text)
		for w < i && len(text)-starts[w+1] >= pieceWindow {
			w++
		}
		if n := len(text) - last; i == len(tools)-1 || n >= maxPiece || n >= minPiece && cutAfter(t, len(text)-starts[i]) {
			bs.window = append(bs.window, next)
			windows = append(windows, nextAt)
			bs.cuts = append(bs.cuts, len(text))
			bs.tools = append(bs.tools, i+1)
			last = len(text)
			next, nextAt = w, starts[w]
			if len(text)-nextAt > maxWindow {
				next, nextAt = i+1, len(text) // an entry too long for a window: none
			}
		}
	}
	*buf = text
	var err error
	if s.changed {
		bs.stream, err = wire.NewStreamPieces(text, bs.cuts, windows, prev.streamOf(), bs.reuse(prev))
	} else {
		// The first Set of a catalog (a new app's) compresses its stream in one piece, as
		// before pieces: a window costs each stretch what compressing it costs, and nothing
		// before could be copied. Its successors compress in pieces, copied from then on.
		bs.stream, err = wire.NewStream(text, bs.cuts)
	}
	if err != nil {
		return nil, err
	}
	as.avail, as.built, as.prev = a, bs, nil
	return bs, nil
}

// last is the stream a new one may copy stretches from: the one built last, else the
// one inherited from the Set this one was made from. as.mu must be held.
func (as *answerStream) last() *builtStream {
	if as.built != nil {
		return as.built
	}
	return as.prev
}

// streamOf is b's stream, nil for a nil b.
func (b *builtStream) streamOf() *wire.Stream {
	if b == nil {
		return nil
	}
	return b.stream
}

// reuse returns, for each stretch of b, the stretch of prev that lists the same tools in
// the same way after the same window (wire.NewStreamPieces's hints): its text and its
// window's are then the same, byte for byte, since a Tool never changes. The first
// stretch, which holds the head (the revision), is never one. nil when prev is nil.
func (b *builtStream) reuse(prev *builtStream) []int {
	if prev == nil || b.avail != nil && b.guardExec != prev.guardExec {
		return nil
	}
	byFirst := make(map[*Tool]int, len(prev.tools))
	for k := 1; k < len(prev.tools); k++ {
		byFirst[prev.listed[prev.tools[k-1]]] = k
	}
	hints := make([]int, len(b.tools))
	for i := range hints {
		hints[i] = -1
		if i == 0 {
			continue
		}
		from, to, w := b.tools[i-1], b.tools[i], b.window[i]
		k, ok := byFirst[b.listed[from]]
		if !ok {
			continue
		}
		pFrom, pTo, pw := prev.tools[k-1], prev.tools[k], prev.window[k]
		// The same tools from the window's first entry to the stretch's last; a window
		// that begins the list has no comma before its first entry.
		if pTo-pFrom == to-from && pFrom-pw == from-w && (pw == 0) == (w == 0) &&
			slices.Equal(prev.listed[pw:pTo], b.listed[w:to]) &&
			allAvailable(b.avail, b.listed[w:to]) && allAvailable(prev.avail, b.listed[w:to]) {
			hints[i] = k
		}
	}
	return hints
}

// allAvailable reports whether no tool of tools is unavailable in a (nil for definitions,
// whose entries carry no availability): their index and full entries then carry no
// runtime object.
func allAvailable(a *availability, tools []*Tool) bool {
	if a == nil || len(a.unavailable) == 0 {
		return true
	}
	for _, t := range tools {
		if _, down := a.unavailable[t.Def.ID]; down {
			return false
		}
	}
	return true
}

// projection numbers the projections for Set.streams.
func projection(detail string) int {
	switch detail {
	case wire.DetailIndex:
		return 0
	case wire.DetailDefinitions:
		return 1
	}
	return 2
}

// streamAnswer makes the kept answer for q from the projection's stream, or returns nil
// when q's answer does not begin as the stream does (a filter) or reaches no cut.
func (s *Set) streamAnswer(q *wire.Query, detail string, unavailable map[string]wire.Runtime) (*cachedAnswer, error) {
	f := newFilter(q)
	if !f.plain() {
		return nil, nil
	}
	a := s.availabilityFor(detail, unavailable)
	selected := s.selectTools(&f, unavailable)
	as, err := s.streamOf(detail, a)
	if err != nil {
		return nil, err
	}
	i, _ := slices.BinarySearch(as.tools, len(selected)+1) // the first cut past the selection
	if i == 0 {
		return nil, nil
	}
	cut, from := as.cuts[i-1], as.tools[i-1]
	buf := answerBuffers.Get()
	defer answerBuffers.Put(buf)
	b, at := s.appendAnswer((*buf)[:0], selected, detail, a, from)
	*buf = b
	if detail == wire.DetailDefinitions {
		at = len(b) - 1 // see newCachedAnswer
	}
	tpl, err := as.stream.Template(cut, b[:at], b[at:])
	if err != nil {
		return nil, err
	}
	return cachedFrom(tpl, detail)
}

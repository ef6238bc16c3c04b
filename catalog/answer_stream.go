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
// objects), cut every streamCutBytes at the end of a tool entry (wire.Stream); an answer
// that lists the first L visible tools reuses the compressed bytes up to the last cut at or before its L-th entry and
// compresses only what follows. The answer decodes to the same JSON as before
// (TestAnswerPayloadStream, FuzzAnswerPayloadStream).

// streamCutBytes is the text between two cuts of an answer stream: what an answer
// compresses of its own at most, besides its end. Smaller cuts save more per answer, but
// every cut ends a deflate block, whose code tables cost bytes (about 1 % of the
// compressed catalog at 16 KiB).
const streamCutBytes = 16 << 10

// answerStream is a projection's compressed answer text, for one availability state
// (the index and full entries carry runtime objects): the last one asked for.
type answerStream struct {
	mu    sync.Mutex
	avail *availability // nil for definitions
	built *builtStream
}

// builtStream is a compressed answer text and the tool count at each cut.
type builtStream struct {
	stream *wire.Stream
	cuts   []int // the text's length at each cut
	tools  []int // the entries before each cut
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
	// The text of an answer that lists the first tools, as appendAnswer writes it, cut
	// after every streamCutBytes of entries.
	bs := new(builtStream)
	tools := s.visible[:min(len(s.visible), wire.MaxQueryLimit)]
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
	last := 0
	for i, t := range tools {
		if i > 0 {
			text = append(text, ',')
		}
		text = appendEntry(text, t, detail, a, s.guard.ExecutionEnabled)
		if len(text)-last >= streamCutBytes || i == len(tools)-1 {
			bs.cuts = append(bs.cuts, len(text))
			bs.tools = append(bs.tools, i+1)
			last = len(text)
		}
	}
	*buf = text
	var err error
	if bs.stream, err = wire.NewStream(text, bs.cuts); err != nil {
		return nil, err
	}
	as.avail, as.built = a, bs
	return bs, nil
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

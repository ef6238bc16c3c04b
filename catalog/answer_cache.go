package catalog

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ansight-go/ansight/internal/bpool"
	"github.com/ansight-go/ansight/wire"
)

// AnswerPayload is Answer encoded for the wire (docs/protocol/messages.md#encoding-a-payload: gzip-base64-json when large).
// Full answers are kept per query and availability state: while neither the Set (the
// catalog and the guard) nor the availability changes, the same query is answered again
// with a copy of the encoded answer and a new evaluatedAtUtc, without selecting,
// encoding or compressing anything (see wire.Template); only definitions, which carry no
// time, are returned as kept. The result must not be modified.
//
// An answer not kept that lists the first visible tools is made from the projection's
// stream, compressed once per Set (see streamOf): only its end is compressed anew.
//
// The payload decodes to what Answer returns; it may compress differently from
// wire.EncodePayload of it (the compressed part never changes, the time and what follows
// it travel uncompressed).
func (s *Set) AnswerPayload(q *wire.Query, unavailable map[string]wire.Runtime, now time.Time) ([]byte, error) {
	q, detail, short, err := s.begin(q, unavailable, now)
	if err != nil {
		return nil, err
	}
	if short != nil {
		return wire.EncodePayload(short)
	}
	key := answerKey{detail: detail, query: queryKey(q)}
	if detail != wire.DetailDefinitions || q.ExecutableOnly {
		// The answer depends on the availability: its runtime objects and revision, or
		// which tools are executable.
		key.avail = s.availabilityOf(unavailable)
	}
	a := s.answers.get(key)
	if a == nil {
		var err error
		if a, err = s.streamAnswer(q, detail, unavailable); a == nil && err == nil {
			buf := answerBuffers.Get()
			b, at := s.appendFull((*buf)[:0], q, detail, unavailable)
			a, err = newCachedAnswer(b, at, detail)
			*buf = b
			answerBuffers.Put(buf)
		}
		if err != nil {
			return nil, err
		}
		s.answers.put(key, a)
	}
	if a.template == nil {
		return a.payload, nil
	}
	var middle [64]byte
	return a.template.AppendPayload(nil, appendEvaluatedAt(middle[:0], now))
}

// answerKey identifies a full answer of one Set: the projection, the query's filters and,
// when the answer depends on it, the availability state (which Set.availabilityOf keeps
// one object per state for, compared by pointer).
type answerKey struct {
	detail string
	query  string
	avail  *availability
}

// queryKey writes down the filters of q (not its detail and revisions, which the key
// holds or the answer ignores).
func queryKey(q *wire.Query) string {
	var b strings.Builder
	for _, s := range [...]string{q.Query, q.Feature, q.Policy} {
		b.WriteString(strconv.Quote(s))
	}
	b.WriteString(strconv.FormatBool(q.ExecutableOnly))
	b.WriteString(strconv.Itoa(q.Limit))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(q.MaxResults))
	for _, id := range q.IDs {
		b.WriteString(strconv.Quote(id))
	}
	return b.String()
}

// cachedAnswer is a kept full answer: the payload itself (definitions), or the template
// that makes it for a given time.
type cachedAnswer struct {
	payload  []byte
	template *wire.Template
}

// newCachedAnswer keeps the answer b, whose evaluatedAtUtc belongs at at. It keeps no
// reference to b: a large answer is kept compressed only.
func newCachedAnswer(b []byte, at int, detail string) (*cachedAnswer, error) {
	if detail == wire.DetailDefinitions {
		// Nothing changes: the payload is kept whole. The template still ends in a stored
		// block, so that a reader can tell the payload repeats (wire.SharedPrefix).
		at = len(b) - 1
	}
	tpl, err := wire.NewTemplate(b[:at], b[at:])
	if err != nil {
		return nil, err
	}
	return cachedFrom(tpl, detail)
}

// cachedFrom keeps the answer of the template tpl: for definitions, its one payload.
func cachedFrom(tpl *wire.Template, detail string) (*cachedAnswer, error) {
	if detail != wire.DetailDefinitions {
		return &cachedAnswer{template: tpl}, nil
	}
	payload, err := tpl.AppendPayload(nil, nil)
	if err != nil {
		return nil, err
	}
	return &cachedAnswer{payload: payload}, nil
}

// answerBuffers recycles the buffers answers are assembled in before they are compressed:
// half a megabyte for a thousand definitions. A new buffer starts empty (the first answer
// sizes it); one above 4 MiB is not kept.
var answerBuffers = bpool.New(0, 4<<20)

// maxCachedAnswers bounds the answers a Set keeps: the few queries a host repeats
// (index, definitions, full), not every filter ever asked for.
const maxCachedAnswers = 8

// answerCache holds a Set's kept answers.
type answerCache struct {
	mu sync.Mutex
	m  map[answerKey]*cachedAnswer
}

func (c *answerCache) get(k answerKey) *cachedAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// put keeps a, dropping some other answer when the cache is full.
func (c *answerCache) put(k answerKey, a *cachedAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[answerKey]*cachedAnswer)
	}
	if len(c.m) >= maxCachedAnswers {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = a
}

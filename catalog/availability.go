package catalog

import (
	"strings"

	"github.com/ansight-go/ansight/wire"
)

// availability is the availability revision of one runtime state: the visible tools that
// are unavailable, with their runtime objects.
type availability struct {
	unavailable map[string]wire.Runtime // visible tools only
	revision    string
}

// availableRuntime is the canonical runtime object of an available tool.
const availableRuntime = `{"available":true}`

// unavailableRuntime returns the runtime of t when unavailable holds it as unavailable.
// Entries for tools that are not registered or say Available:true are ignored.
func unavailableRuntime(unavailable map[string]wire.Runtime, id string) (wire.Runtime, bool) {
	if len(unavailable) == 0 {
		return wire.Runtime{}, false
	}
	r, ok := unavailable[id]
	if !ok || r.Available {
		return wire.Runtime{}, false
	}
	return r, true
}

// availabilityOf returns the availability of the runtime state described by unavailable.
// The last result is cached by content: a query in an unchanged state compares the map
// with the cached one instead of hashing every visible tool again.
func (s *Set) availabilityOf(unavailable map[string]wire.Runtime) *availability {
	if a := s.avail.Load(); a != nil && s.sameAvailability(a, unavailable) {
		return a
	}
	a := &availability{unavailable: map[string]wire.Runtime{}}
	for id, r := range unavailable {
		if t, ok := s.byID[id]; ok && !r.Available && s.guard.Visible(t.Def.Policy) {
			a.unavailable[id] = r
		}
	}
	w := newHashWriter()
	w.writeString(`{"tools":[`)
	var scratch []byte
	for i, t := range s.visible {
		scratch = scratch[:0]
		if i > 0 {
			scratch = append(scratch, ',')
		}
		scratch = append(scratch, t.availOpen...)
		if r, ok := a.unavailable[t.Def.ID]; ok {
			scratch = appendRuntimeCanonical(scratch, &r)
		} else {
			scratch = append(scratch, availableRuntime...)
		}
		scratch = append(scratch, '}')
		w.write(scratch)
	}
	w.writeString("]}")
	a.revision = w.revision()
	s.avail.Store(a)
	return a
}

// sameAvailability reports whether unavailable describes the same visible unavailable
// tools as a, without allocating.
func (s *Set) sameAvailability(a *availability, unavailable map[string]wire.Runtime) bool {
	n := 0
	for id, r := range unavailable {
		if r.Available {
			continue
		}
		t, ok := s.byID[id]
		if !ok || !s.guard.Visible(t.Def.Policy) {
			continue
		}
		if c, ok := a.unavailable[id]; !ok || c != r {
			return false
		}
		n++
	}
	return n == len(a.unavailable)
}

// appendRuntimeCanonical appends an unavailable runtime object with its keys in RFC 8785
// order (available, code, reason, remediation, requiredState, retryable).
func appendRuntimeCanonical(b []byte, r *wire.Runtime) []byte {
	b = append(b, `{"available":false`...)
	b = appendOptionalString(b, `,"code":`, string(r.Code))
	b = appendOptionalString(b, `,"reason":`, r.Reason)
	b = appendOptionalString(b, `,"remediation":`, r.Remediation)
	b = appendOptionalString(b, `,"requiredState":`, r.RequiredState)
	if r.Retryable {
		b = append(b, `,"retryable":true`...)
	}
	return append(b, '}')
}

// appendRuntime appends an unavailable runtime object in the order of docs/protocol/catalog.md#availability (available,
// code, reason, requiredState, remediation, retryable), as entries and changes carry it.
func appendRuntime(b []byte, r *wire.Runtime) []byte {
	b = append(b, `{"available":false`...)
	b = appendOptionalString(b, `,"code":`, string(r.Code))
	b = appendOptionalString(b, `,"reason":`, r.Reason)
	b = appendOptionalString(b, `,"requiredState":`, r.RequiredState)
	b = appendOptionalString(b, `,"remediation":`, r.Remediation)
	if r.Retryable {
		b = append(b, `,"retryable":true`...)
	}
	return append(b, '}')
}

// appendOptionalString appends a member when value is not empty. Invalid UTF-8 (which a
// tool's availability callback could produce) is replaced rather than failing the query.
func appendOptionalString(b []byte, key, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, key...)
	out, err := appendString(b, value)
	if err != nil {
		out, _ = appendString(b, strings.ToValidUTF8(value, "\uFFFD"))
	}
	return out
}

package mcpbridge

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/wire"
)

// Results an agent can afford: a result over Options.MaxResultBytes is saved to a file and
// replaced by a truncation note (its size, an outline of its members, the file's path and a
// result id); ansight_read_result then reads any part of it by JSON pointer, a page of an
// array or a slice of a string at a time. Claude Code caps tool output at 25,000 tokens and
// Claude Desktop refuses results over 1 MiB characters: without the cap, a 2 MB result
// became a 4.2 MB response (text and structured content both carry it).

// Bounds of saved results.
const (
	// maxSavedResults is how many saved results the result directory keeps.
	maxSavedResults = 32
	// maxOutlineKeys bounds the members an outline lists.
	maxOutlineKeys = 40
	// maxLiteralBytes is the largest member an outline shows as is.
	maxLiteralBytes = 80
	// minReadBytes is the smallest page ansight_read_result returns.
	minReadBytes = 1 << 10
	// resultFilePrefix names the files the bridge saves (and the only ones it removes).
	resultFilePrefix = "result-"
)

// resultIDPattern is what a result id looks like: the file name without ".json".
var resultIDPattern = regexp.MustCompile(`^result-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$`)

// truncation replaces a member that was over the cap.
type truncation struct {
	SizeBytes int    `json:"sizeBytes"`
	ResultID  string `json:"resultId"`
	Path      string `json:"path"`
	// Outline describes the saved value: its members with their types and sizes (small ones
	// as they are).
	Outline any    `json:"outline,omitzero"`
	Note    string `json:"note"`
}

// resultStore saves results over the cap.
type resultStore struct {
	mu  sync.Mutex
	dir string // "" until first use when Options.ResultDir is empty
}

// save writes v to a new file and returns its id and path, keeping the newest
// maxSavedResults files of the directory.
func (s *resultStore) save(v jsontext.Value) (id, path string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		d, err := os.MkdirTemp("", "ansight-mcp-results-")
		if err != nil {
			return "", "", err
		}
		s.dir = d
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return "", "", err
	}
	var r [4]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand contract)
	id = resultFilePrefix + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:])
	path = filepath.Join(s.dir, id+".json")
	if err := os.WriteFile(path, v, 0o600); err != nil {
		return "", "", err
	}
	s.prune()
	return id, path, nil
}

// prune removes all but the newest maxSavedResults saved results. Callers hold s.mu.
func (s *resultStore) prune() {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	type saved struct {
		name string
		mod  time.Time
	}
	var files []saved
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && resultIDPattern.MatchString(id) && e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				files = append(files, saved{e.Name(), info.ModTime()})
			}
		}
	}
	if len(files) <= maxSavedResults {
		return
	}
	slices.SortFunc(files, func(a, b saved) int { return cmp.Or(a.mod.Compare(b.mod), strings.Compare(a.name, b.name)) })
	for _, f := range files[:len(files)-maxSavedResults] {
		os.Remove(filepath.Join(s.dir, f.name))
	}
}

// load reads a saved result.
func (s *resultStore) load(id string) (jsontext.Value, error) {
	if !resultIDPattern.MatchString(id) {
		e := failf(wire.CodeResultNotFound, "%q is not a result id (they look like result-20260101-…)", id)
		e.Kind = wire.KindInvalid // not an id at all
		return nil, e
	}
	s.mu.Lock()
	dir := s.dir
	s.mu.Unlock()
	if dir == "" {
		return nil, failf(wire.CodeResultNotFound, "no result %s", id)
	}
	b, err := os.ReadFile(filepath.Join(dir, id+".json"))
	if err != nil {
		return nil, failf(wire.CodeResultNotFound, "no result %s (the bridge keeps the latest %d)", id, maxSavedResults)
	}
	return jsontext.Value(b), nil
}

// spill saves v and returns the note that replaces it.
func (br *Bridge) spill(v jsontext.Value, what string) *truncation {
	t := &truncation{SizeBytes: len(v), Outline: outline(v)}
	id, path, err := br.results.save(v)
	if err != nil {
		t.Note = fmt.Sprintf("%s is %d bytes, over this bridge's cap of %d, and could not be saved (%v). Narrow the call (fewer items, a filter).", what, len(v), br.opts.MaxResultBytes, err)
		return t
	}
	t.ResultID, t.Path = id, path
	t.Note = fmt.Sprintf("%s is %d bytes, over this bridge's cap of %d: saved. Read parts with ansight_read_result {\"resultId\":%q,\"pointer\":%q}, or open the file.",
		what, len(v), br.opts.MaxResultBytes, id, examplePointer(v, t.Outline, ""))
	return t
}

// examplePointer is the pointer a note suggests for reading a part of v, below base, taken
// from v's outline o so that it exists: an array's first item; of an object, the first
// member the outline describes by size (too large to show, so the one worth reading), else
// its first member.
func examplePointer(v jsontext.Value, o any, base string) string {
	switch v.Kind() {
	case '[':
		return base + "/0"
	case '{':
		m, ok := o.(map[string]any)
		if !ok {
			break
		}
		keys := slices.Sorted(maps.Keys(m))
		keys = slices.DeleteFunc(keys, func(k string) bool { _, isNote := m[k].(string); return k == "…" && isNote })
		if len(keys) == 0 {
			break
		}
		pick := keys[0]
		for _, k := range keys {
			if _, described := m[k].(string); described {
				pick = k
				break
			}
		}
		return base + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(pick)
	}
	return base
}

// outline describes a JSON value in a few hundred bytes: an object's members (small ones
// as they are, others by type and size), an array's length and first item.
func outline(v jsontext.Value) any {
	switch v.Kind() {
	case '{':
		var m map[string]jsontext.Value
		if wire.Unmarshal(v, &m) != nil {
			return describe(v)
		}
		out := map[string]any{}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		})
		for i, k := range keys {
			if i == maxOutlineKeys {
				out["…"] = fmt.Sprintf("%d more members", len(keys)-maxOutlineKeys)
				break
			}
			if len(m[k]) <= maxLiteralBytes {
				out[k] = m[k]
			} else {
				out[k] = describe(m[k])
			}
		}
		return out
	case '[':
		var items []jsontext.Value
		if wire.Unmarshal(v, &items) != nil || len(items) == 0 {
			return describe(v)
		}
		first := any(describe(items[0]))
		if len(items[0]) <= maxLiteralBytes*4 {
			first = items[0]
		}
		return map[string]any{"array": describe(v), "first": first}
	}
	return describe(v)
}

// describe is a value's type and size: "array of 2000 items, 1954321 bytes".
func describe(v jsontext.Value) string {
	switch v.Kind() {
	case '{':
		var m map[string]jsontext.Value
		_ = wire.Unmarshal(v, &m)
		return fmt.Sprintf("object of %d members, %d bytes", len(m), len(v))
	case '[':
		var items []jsontext.Value
		_ = wire.Unmarshal(v, &items)
		return fmt.Sprintf("array of %d items, %d bytes", len(items), len(v))
	case '"':
		var s string
		_ = wire.Unmarshal(v, &s)
		return fmt.Sprintf("string of %d characters", utf8.RuneCountInString(s))
	}
	return fmt.Sprintf("%d bytes", len(v))
}

// fitCall brings a call's output under the cap: the result and the evidence, larger first,
// are replaced by truncation notes until it fits. It returns the output's encoding as it
// stands then (nil if it could not be encoded), which is the answer's: encodeResult
// encodes the same way (json.Deterministic), so it is not encoded twice.
func (br *Bridge) fitCall(out *callOutput) []byte {
	return br.fitParts(func() []byte { return encoded(out) }, out.parts(""))
}

// fitBatch is fitCall for a batch: the largest parts of any item go first.
func (br *Bridge) fitBatch(out *batchOutput) []byte {
	var parts []part
	for i := range out.Results {
		it := &out.Results[i]
		parts = append(parts, it.parts(fmt.Sprintf(" of call %d", it.Index))...)
	}
	return br.fitParts(func() []byte { return encoded(out) }, parts)
}

// parts are the members of an outcome that may be set aside.
func (o *outcome) parts(of string) []part {
	return []part{{&o.Result, &o.ResultTruncated, "the result" + of}, {&o.Evidence, &o.EvidenceTruncated, "the evidence" + of}}
}

// part is a member that may be replaced by a truncation note.
type part struct {
	value *jsontext.Value
	note  **truncation
	what  string
}

// fitParts spills parts until encode's encoding fits the cap, and returns the last one.
func (br *Bridge) fitParts(encode func() []byte, parts []part) []byte {
	b := encode()
	if len(b) <= br.opts.MaxResultBytes {
		return b
	}
	slices.SortStableFunc(parts, func(a, b part) int { return len(*b.value) - len(*a.value) })
	for _, p := range parts {
		if len(*p.value) == 0 {
			continue
		}
		*p.note = br.spill(*p.value, p.what)
		*p.value = nil
		if b = encode(); len(b) <= br.opts.MaxResultBytes {
			return b
		}
	}
	return b
}

// encoded is v as an answer encodes it (encodeResult), or nil if it cannot be encoded.
func encoded(v any) []byte {
	b, err := wire.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

type readResultInput struct {
	ResultID string `json:"resultId"`
	Pointer  string `json:"pointer,omitzero"`
	Offset   int    `json:"offset,omitzero"`
	MaxBytes int    `json:"maxBytes,omitzero"`
}

type readResultOutput struct {
	ResultID string `json:"resultId"`
	Pointer  string `json:"pointer"`
	// SizeBytes is the size of the value at pointer.
	SizeBytes int `json:"sizeBytes"`
	// Value is the whole value, when it fits.
	Value jsontext.Value `json:"value,omitzero"`
	// Items is a page of an array: Offset is the index of the first, Total the array's
	// length, NextOffset (when more follow) the offset of the next page.
	Items []jsontext.Value `json:"items,omitempty"`
	// Text is a slice of a string (offsets in bytes).
	Text       *string `json:"text,omitzero"`
	Offset     int     `json:"offset,omitzero"`
	Total      int     `json:"total,omitzero"`
	NextOffset int     `json:"nextOffset,omitzero"`
	// Outline describes an object too large to return: read its members by pointer.
	Outline any    `json:"outline,omitzero"`
	Note    string `json:"note,omitzero"`
}

func (br *Bridge) readResult(_ context.Context, _ *mcp.CallToolRequest, in *readResultInput) (*mcp.CallToolResult, error) {
	v, err := br.results.load(in.ResultID)
	if err != nil {
		return br.fail(err, "", "")
	}
	budget := cmp.Or(in.MaxBytes, br.opts.MaxResultBytes/2)
	out, err := readPart(v, in.Pointer, in.Offset, max(minReadBytes, min(budget, br.opts.MaxResultBytes/2)))
	if err != nil {
		return br.fail(err, "", "")
	}
	out.ResultID = in.ResultID
	return appStructured(out, false)
}

// readPart is the part of a saved result at pointer that fits budget bytes: the whole
// value, a page of an array from offset, a slice of a string from byte offset, or an
// outline of an object too large.
func readPart(v jsontext.Value, pointer string, offset, budget int) (readResultOutput, error) {
	v, err := pointAt(v, pointer)
	if err != nil {
		return readResultOutput{}, err
	}
	out := readResultOutput{Pointer: pointer, SizeBytes: len(v)}
	switch {
	case len(v) <= budget && offset == 0:
		out.Value = v
	case v.Kind() == '[':
		var items []jsontext.Value
		if err := wire.Unmarshal(v, &items); err != nil {
			return out, err
		}
		out.Total, out.Offset = len(items), min(max(0, offset), len(items))
		used := 0
		for _, it := range items[out.Offset:] {
			if used+len(it) > budget && len(out.Items) > 0 {
				break
			}
			if len(it) > budget {
				out.Note = fmt.Sprintf("item %d alone is %d bytes: read it by pointer (%s/%d)", out.Offset, len(it), pointer, out.Offset)
				out.Outline = outline(it)
				break
			}
			out.Items = append(out.Items, it)
			used += len(it) + 1
		}
		if next := out.Offset + len(out.Items); next < len(items) && len(out.Items) > 0 {
			out.NextOffset = next
		}
	case v.Kind() == '"':
		var s string
		if err := wire.Unmarshal(v, &s); err != nil {
			return out, err
		}
		start := min(max(0, offset), len(s))
		for start > 0 && start < len(s) && !utf8.RuneStart(s[start]) {
			start--
		}
		end := min(len(s), start+budget)
		for end > start && end < len(s) && !utf8.RuneStart(s[end]) {
			end--
		}
		text := s[start:end]
		out.Text, out.Offset, out.Total = &text, start, len(s)
		if end < len(s) {
			out.NextOffset = end
		}
	default:
		out.Outline = outline(v)
		out.Note = "Too large to return whole: read a member with pointer (e.g. " + strconv.Quote(examplePointer(v, out.Outline, pointer)) + ")."
	}
	return out, nil
}

// pointAt resolves an RFC 6901 JSON pointer in v.
func pointAt(v jsontext.Value, pointer string) (jsontext.Value, error) {
	if pointer == "" {
		return v, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, failf(wire.CodeArgumentsInvalid, "pointer %q must start with / (RFC 6901), e.g. /items/3", pointer)
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v.Kind() {
		case '{':
			var m map[string]jsontext.Value
			if err := wire.Unmarshal(v, &m); err != nil {
				return nil, err
			}
			next, ok := m[tok]
			if !ok {
				return nil, failf(wire.CodeArgumentsInvalid, "pointer %q: no member %q", pointer, tok)
			}
			v = next
		case '[':
			var items []jsontext.Value
			if err := wire.Unmarshal(v, &items); err != nil {
				return nil, err
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(items) || tok != strconv.Itoa(i) {
				return nil, failf(wire.CodeArgumentsInvalid, "pointer %q: %q is not an index of an array of %d items", pointer, tok, len(items))
			}
			v = items[i]
		default:
			return nil, failf(wire.CodeArgumentsInvalid, "pointer %q: %q goes into a %s", pointer, tok, describe(v))
		}
	}
	return v, nil
}

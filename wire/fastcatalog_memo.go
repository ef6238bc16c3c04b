package wire

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sort"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// A host asks one app for its catalog again and again — other limits, other pages, the
// same tools — and each answer repeats most of the one before: the same header, the same
// first tool entries, byte for byte. A CatalogMemo keeps what decoding an answer found, so
// that the next answer pays only for what differs: the inflation resumes where the
// compressed bytes part (gzipMemo), and the strict decoding skips the tool entries that
// are the same bytes as the kept answer's, at the same offsets. Those are decoded in a
// skeleton of the new JSON — its own bytes up to the first entry, an empty object in
// place of the entries both answers share, then its own bytes from the first that differs
// — which is valid exactly when the whole is: a tools entry is checked for itself (its
// own names, its own values), and everything else of the answer is in the skeleton. The
// shared entries are the kept answer's decoded values of the same bytes.
// FuzzCatalogMemo holds UnmarshalCatalogPayload against UnmarshalPayload.

// CatalogMemo is a decoded catalog payload kept to decode a later one faster (see
// UnmarshalCatalogPayload). It is immutable and safe for concurrent use.
type CatalogMemo struct {
	json  []byte // the payload's JSON
	cat   Catalog
	first int   // where the first tools entry starts in json (when ends is not empty)
	ends  []int // where each tools entry ends in json; nil when the fast decoder did not read it
	gz    *gzipMemo
}

// UnmarshalCatalogPayload is UnmarshalPayload of a tool.catalog payload, given the memo
// of an earlier one (or nil): the payload's JSON, the catalog decoded from it and its own
// memo. The catalog shares entries (and their strings and schemas) with the earlier one's
// where the two payloads hold the same bytes: do not modify either. On a failure it
// returns UnmarshalPayload's error.
func UnmarshalCatalogPayload(raw []byte, maxInflated int64, prev *CatalogMemo) (payload []byte, cat *Catalog, memo *CatalogMemo, err error) {
	if maxInflated <= 0 {
		maxInflated = DefaultMaxInflatedBytes
	}
	memo = new(CatalogMemo)
	var out []byte
	inflated, known := false, 0 // known: how many bytes of out are prev.json's
	if w, err := readWrapper(raw); err == nil && w != nil && w.encoding == EncodingGzipBase64JSON {
		var pg *gzipMemo
		var pj []byte
		if prev != nil {
			pg, pj = prev.gz, prev.json
		}
		out, memo.gz, known, inflated = inflateMemo(w, maxInflated, pg, pj)
	}
	if !inflated {
		if out, inflated, err = inflatePayload(raw, maxInflated); err != nil {
			return nil, nil, nil, err
		}
		if !inflated {
			out = slices.Clone(out) // raw itself, which the memo must not keep
		}
	}
	memo.json = out
	err = decodeUnwrapped(out, inflated, func(data []byte) error { return memo.decode(data, prev, known) })
	if err != nil {
		return nil, nil, nil, err
	}
	return out, &memo.cat, memo, nil
}

// decode decodes data into m.cat, reusing prev's entries that data repeats; data's first
// known bytes are prev.json's.
func (m *CatalogMemo) decode(data []byte, prev *CatalogMemo, known int) error {
	if prev != nil && len(prev.ends) > 0 {
		n := known + commonPrefix(data[known:], prev.json[known:])
		k, _ := slices.BinarySearch(prev.ends, n+1) // the entries that end within the shared bytes
		if k > 0 {
			at := prev.ends[k-1]
			skeleton := make([]byte, 0, prev.first+2+len(data)-at)
			skeleton = append(append(append(skeleton, data[:prev.first]...), "{}"...), data[at:]...)
			var c Catalog
			first, ends, err := fastCatalogEnds(skeleton, &c, 0)
			if err == nil && first == prev.first && len(ends) > 0 {
				c.Tools = slices.Concat(prev.cat.Tools[:k], c.Tools[1:])
				shift := at - (first + 2)
				m.cat, m.first, m.ends = c, first, slices.Grow(prev.ends[:k:k], len(ends)-1)
				for _, e := range ends[1:] {
					m.ends = append(m.ends, e+shift)
				}
				return nil
			}
			// Refused, or beyond the fast decoder: decode it all, which words any error.
		} else if m.reuseEntries(data, prev) {
			return nil
		}
	}
	first, ends, err := fastCatalogEnds(data, &m.cat, 0)
	if err == errSlowPath {
		m.cat = Catalog{}
		return decodeStrict(data, &m.cat)
	}
	m.first, m.ends = first, ends
	return err
}

// fastCatalogEnds is fastCatalog over data, returning where the first tools entry starts
// and each ends; data holds about tools entries (0: not known).
func fastCatalogEnds(data []byte, dst *Catalog, tools int) (first int, ends []int, err error) {
	s := getScanner(data)
	defer s.put()
	s.tools = tools
	defer func() { s.tools = 0 }()
	if err := s.fastCatalog(dst); err != nil {
		return 0, nil, err
	}
	return s.cs.first, slices.Clone(s.cs.ends), nil
}

// After a change of the catalog — another guard, a tool registered — the answer's head
// holds another revision and the shared prefix ends before the first entry, though most
// entries are the same bytes as before, at other offsets when an entry came or went.
// reuseEntries decodes such an answer in a skeleton where every entry that is, byte for
// byte, one of prev's (found by its id, which an entry the app writes begins with) is an
// empty object: the skeleton is decoded strictly in full, and its entries must fall where
// the walk put them, so each empty object stands for exactly one tools entry, checked for
// itself as before. An entry of no id, of other bytes, or any separator but a bare comma
// is read as it is. It reports false, m untouched, when it found nothing to reuse or the
// skeleton is refused (the plain decoding then words any error).
func (m *CatalogMemo) reuseEntries(data []byte, prev *CatalogMemo) bool {
	first := prev.first
	if first <= 0 || first >= len(data) || data[first] != '{' {
		return false
	}
	sorted := true // prev's entries by their keys, each one's above the one before's
	var last []byte
	for i, end := range prev.ends {
		start := prev.entryStart(i)
		if start >= end || prev.json[start-1] != "[,"[min(i, 1)] {
			return false // not compact: the offsets do not say where entries start
		}
		k := entryKey(prev.json[start:end])
		sorted = sorted && k != nil && (i == 0 || bytes.Compare(last, k) < 0)
		last = k
	}
	// Most entries follow the one before as they did in prev: each is first compared with
	// prev's entry after the last one found, then looked up by its id: by a binary search
	// when prev's keys are sorted (a Set lists its tools by id), else in an index of them
	// made the first time.
	var seed maphash.Seed
	var byKey map[uint64]int // by the hash of entryKey; the bytes are compared
	lookup := func(k []byte) (int, bool) {
		if sorted {
			key := func(i int) []byte { return entryKey(prev.json[prev.entryStart(i):prev.ends[i]]) }
			i := sort.Search(len(prev.ends), func(i int) bool { return bytes.Compare(key(i), k) >= 0 })
			return i, i < len(prev.ends) && bytes.Equal(key(i), k)
		}
		if byKey == nil {
			seed = maphash.MakeSeed()
			byKey = make(map[uint64]int, len(prev.ends))
			for i, end := range prev.ends {
				if k := entryKey(prev.json[prev.entryStart(i):end]); k != nil {
					h := maphash.Bytes(seed, k)
					if _, dup := byKey[h]; !dup {
						byKey[h] = i
					}
				}
			}
		}
		i, ok := byKey[maphash.Bytes(seed, k)]
		return i, ok
	}
	next := 0 // prev's entry after the last one found
	skeleton := make([]byte, 0, first+len(data)/8)
	skeleton = append(skeleton, data[:first]...)
	n := len(prev.ends) + 16
	ends, skelEnds := make([]int, 0, n), make([]int, 0, n) // each entry's end in data and in the skeleton
	type reused struct{ at, from int }
	reuse := make([]reused, 0, n)
	var js jsonscan.Scanner
	defer js.Release()
	for p := first; ; {
		entry := -1
		if k := entryKey(data[p:]); k != nil {
			i, ok := next, next < len(prev.ends)
			if ok {
				// The same id (and so, when the bytes agree, the same entry) as prev's next.
				e := prev.json[prev.entryStart(i):prev.ends[i]]
				ok = len(e) > len(k) && bytes.Equal(e[:len(k)], k)
			}
			if !ok {
				i, ok = lookup(k)
			}
			if ok {
				if e := prev.json[prev.entryStart(i):prev.ends[i]]; bytes.HasPrefix(data[p:], e) {
					entry, next = i, i+1
					p += len(e)
				}
			}
		}
		if entry >= 0 {
			reuse = append(reuse, reused{at: len(ends), from: entry})
			skeleton = append(skeleton, "{}"...)
		} else {
			js.Reset(data[p:], MaxDepth-2)
			v, err := js.Value()
			if err != nil || len(v) == 0 || v[0] != '{' {
				return false
			}
			skeleton = append(skeleton, data[p:p+len(v)]...)
			p += len(v)
		}
		ends, skelEnds = append(ends, p), append(skelEnds, len(skeleton))
		if p >= len(data) {
			return false
		}
		if data[p] != ',' {
			skeleton = append(skeleton, data[p:]...)
			break
		}
		skeleton = append(skeleton, ',')
		p++
	}
	if len(reuse) == 0 {
		return false
	}
	var c Catalog
	sFirst, sEnds, err := fastCatalogEnds(skeleton, &c, len(ends))
	if err != nil || sFirst != first || !slices.Equal(sEnds, skelEnds) || len(c.Tools) != len(ends) {
		return false
	}
	for _, r := range reuse {
		c.Tools[r.at] = prev.cat.Tools[r.from]
	}
	m.cat, m.first, m.ends = c, first, ends
	return true
}

// entryStart is where m's tools entry i begins in m.json: at first, or after the comma
// that ends the one before.
func (m *CatalogMemo) entryStart(i int) int {
	if i == 0 {
		return m.first
	}
	return m.ends[i-1] + 1
}

// entryKey is the start of a tools entry up to the end of its id — `{"id":"…"` — when it
// begins so and the id has no escape; else nil.
func entryKey(b []byte) []byte {
	const open = `{"id":"`
	if !bytes.HasPrefix(b, []byte(open)) {
		return nil
	}
	for i := len(open); i < len(b) && i < len(open)+256; i++ {
		switch b[i] {
		case '"':
			return b[:i+1]
		case '\\':
			return nil
		}
	}
	return nil
}

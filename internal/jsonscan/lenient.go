package jsonscan

import (
	"bytes"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// TopStrings reads, without the strict rules, the top-level members of the JSON object
// data named in names (at most 64): vals[i] gets the value of the first member named
// names[i] when it is a string of valid UTF-8, and "" otherwise; a later member of the same
// name is ignored, other members are skipped unread. Reading stops at the end of the
// object, at the first syntax error (what was read before it stands), or when stop, if not
// nil, returns true after the member names[i] was read.
//
// It is the one lenient reader of the protocol: for messages the strict decoder refuses (or
// has not read yet), to route them or to answer the request they claim to be, by its id.
// Duplicate names and invalid UTF-8 do not stop it, since those are what strict decoding
// refuses.
func TopStrings(data []byte, names, vals []string, stop func(i int) bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return
	}
	var seen uint64
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return
		}
		i := slices.Index(names, tok.String()) // before the next read voids the token
		if i < 0 || i >= 64 || seen&(1<<i) != 0 {
			if dec.SkipValue() != nil {
				return
			}
			continue
		}
		seen |= 1 << i
		v, err := dec.ReadValue()
		if err != nil {
			return
		}
		vals[i] = ""
		if v.Kind() == '"' {
			if s, err := jsontext.AppendUnquote(nil, v); err == nil {
				vals[i] = string(s)
			}
		}
		if stop != nil && stop(i) {
			return
		}
	}
}

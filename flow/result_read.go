package flow

import (
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// Tool results are read with the protocol's in-place scanner rather than a decoder: a
// step that expects one value of a result finds it without reading the rest into a tree,
// and the scanners are pooled, so a step costs the runner little beside the call.

var scanners = sync.Pool{New: func() any { return new(jsonscan.Scanner) }}

// parseResult reads a JSON value a tool returned (already checked by the host's strict
// decoder; checked again here, within the same bounds).
func parseResult(raw jsontext.Value) (*value, error) {
	if len(raw) == 0 {
		return &value{kind: kindNull}, nil
	}
	s := scanners.Get().(*jsonscan.Scanner)
	defer func() { s.Release(); scanners.Put(s) }()
	s.Reset(raw, resultLimits.depth)
	n := 0
	v, err := scanValue(s, &n)
	if err == nil {
		err = s.End()
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// lookup returns the value at toks in raw (nil when there is none) without reading the
// values around it.
func lookup(raw jsontext.Value, toks []string) (*value, error) {
	if len(raw) == 0 {
		if len(toks) == 0 {
			return &value{kind: kindNull}, nil
		}
		return nil, nil
	}
	s := scanners.Get().(*jsonscan.Scanner)
	defer func() { s.Release(); scanners.Put(s) }()
	s.Reset(raw, resultLimits.depth)
	for _, tok := range toks {
		switch s.Peek() {
		case '{':
			if err := s.EnterObject(); err != nil {
				return nil, err
			}
			found := false
			for i := 0; ; i++ {
				name, more, err := s.Member(i)
				if err != nil {
					return nil, err
				}
				if !more {
					return nil, nil
				}
				if string(name) == tok {
					found = true
					break
				}
				if err := s.Skip(); err != nil {
					return nil, err
				}
			}
			if !found {
				return nil, nil
			}
		case '[':
			idx, err := strconv.Atoi(tok)
			if err != nil || idx < 0 || (len(tok) > 1 && tok[0] == '0') || tok[0] == '+' {
				return nil, nil
			}
			if err := s.EnterArray(); err != nil {
				return nil, err
			}
			for i := 0; ; i++ {
				more, err := s.Element(i)
				if err != nil {
					return nil, err
				}
				if !more {
					return nil, nil
				}
				if i == idx {
					break
				}
				if err := s.Skip(); err != nil {
					return nil, err
				}
			}
		default:
			return nil, nil
		}
	}
	n := 0
	return scanValue(s, &n)
}

// scanValue reads the next value into a tree; n counts the values read.
func scanValue(s *jsonscan.Scanner, n *int) (*value, error) {
	*n++
	if *n > resultLimits.values {
		return nil, errorf(Pos{File: "result"}, "more than %d values in a result", resultLimits.values)
	}
	switch s.Peek() {
	case '{':
		if err := s.EnterObject(); err != nil {
			return nil, err
		}
		v := &value{kind: kindObject}
		for i := 0; ; i++ {
			name, more, err := s.Member(i)
			if err != nil {
				return nil, err
			}
			if !more {
				return v, nil
			}
			v.names = append(v.names, &value{kind: kindString, text: string(name)})
			e, err := scanValue(s, n)
			if err != nil {
				return nil, err
			}
			v.elems = append(v.elems, e)
		}
	case '[':
		if err := s.EnterArray(); err != nil {
			return nil, err
		}
		v := &value{kind: kindArray}
		for i := 0; ; i++ {
			more, err := s.Element(i)
			if err != nil {
				return nil, err
			}
			if !more {
				return v, nil
			}
			e, err := scanValue(s, n)
			if err != nil {
				return nil, err
			}
			v.elems = append(v.elems, e)
		}
	case '"':
		raw, escaped, err := s.String()
		if err != nil {
			return nil, err
		}
		body := raw[1 : len(raw)-1]
		if escaped {
			return &value{kind: kindString, text: string(jsonscan.AppendUnescaped(nil, body))}, nil
		}
		return &value{kind: kindString, text: string(body)}, nil
	}
	raw, err := s.Value()
	if err != nil {
		return nil, err
	}
	switch raw[0] {
	case 'n':
		return &value{kind: kindNull}, nil
	case 't', 'f':
		return &value{kind: kindBool, text: string(raw)}, nil
	}
	return &value{kind: kindNumber, text: string(raw)}, nil
}

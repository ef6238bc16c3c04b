package wire

import (
	"errors"
	"reflect"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// The two payloads on every small call's path, tool.call and tool.result, are decoded by
// hand in the same pass as the strict scan, instead of a scan followed by the json
// package's reflective decoding of the same bytes. Only their common form is taken this
// way: members of the right JSON kinds, no evidence. Anything else — null or
// mistyped members, after, evidence — gives up (errSlowPath) before the destination is
// touched, and the generic path decodes it, with its own errors. FuzzFastDecode holds the
// two paths against each other.

// errSlowPath asks for the generic decoder.
var errSlowPath = errors.New("wire: not the common form")

var (
	callShape   = shapeOf(reflect.TypeFor[Call]())
	resultShape = shapeOf(reflect.TypeFor[Result]())
)

// fastDecode decodes data into v when v is a *Call, a *Result or a *Catalog (see
// fastcatalog.go) in their common form. It
// returns errSlowPath, v untouched, when the generic decoder must do it; any other error
// is the input's (a *DecodeError). The value is built in the pooled scanner, which keeps
// it off the heap until it is copied out.
func fastDecode(data []byte, v any) error {
	switch v := v.(type) {
	case *Call:
		if v != nil {
			return fastInto(data, v, callShape, (*scanner).readCall, func(s *scanner) *Call { return &s.call })
		}
	case *Result:
		if v != nil {
			return fastInto(data, v, resultShape, (*scanner).readResult, func(s *scanner) *Result { return &s.result })
		}
	case *Catalog:
		if v != nil {
			s := getScanner(data)
			defer s.put()
			return s.fastCatalog(v)
		}
	}
	return errSlowPath
}

// fastInto reads data as one object of shape sh into the scanner's slot for T, then
// copies it to dst.
func fastInto[T any](data []byte, dst *T, sh *shape, read func(*scanner, *field) error, slot func(*scanner) *T) error {
	s := getScanner(data)
	defer s.put()
	err := s.fast(sh, read)
	if err == nil {
		*dst = *slot(s)
	}
	return err
}

// fast reads the input as one object of shape sh, handing each field's value to read.
func (s *scanner) fast(sh *shape, read func(s *scanner, f *field) error) error {
	if s.js.Peek() != '{' {
		return errSlowPath
	}
	if err := s.members(sh, read); err != nil {
		if err == errSlowPath {
			return err
		}
		return asDecodeError(err)
	}
	return s.end()
}

// members reads the struct-shaped object at the scanner's position with the strict checks
// (no name equal to a field's or to another's only under case folding); read gets every
// member that is a field and must consume its value, unknown members are checked and
// skipped. Errors carry paths relative to the object (see inPath).
func (s *scanner) members(sh *shape, read func(s *scanner, f *field) error) error {
	if err := s.js.EnterObject(); err != nil {
		return err
	}
	var folded map[string]struct{}
	allExact := true
	for i := 0; ; i++ {
		name, more, err := s.js.Member(i)
		if err != nil || !more {
			return err
		}
		at := s.js.NameOffset()
		f, variant := sh.lookup(name)
		if err := s.checkFoldUnlessExact(sh, f, name, &allExact, &folded, at); err != nil {
			return err
		}
		if variant {
			return decodeError("/"+string(name), int64(at), "object key "+strconv.Quote(string(name))+
				" differs from the field name "+strconv.Quote(string(f.name))+" only by case")
		}
		if f == nil {
			err = s.js.Skip()
		} else {
			err = read(s, f)
		}
		if err != nil {
			return inPath(err, string(name))
		}
	}
}

// str reads a string member; anything else takes the slow path.
func (s *scanner) str(dst *string) error {
	if s.js.Peek() != '"' {
		return errSlowPath
	}
	raw, escaped, err := s.js.String()
	if err == nil {
		*dst = s.intern(unquote(raw, escaped))
	}
	return err
}

// intern returns b as a string, shared with an earlier equal one when the scanner's small
// cache has it: tool ids and call ids repeat from message to message, and a pooled
// scanner mostly serves one goroutine.
func (s *scanner) intern(b []byte) string {
	if len(b) == 0 || len(b) > 64 {
		return string(b)
	}
	h := (uint(len(b))*31 + uint(b[0])*7 + uint(b[len(b)-1])) % uint(len(s.interned))
	if v := s.interned[h]; v == string(b) {
		return v
	}
	v := string(b)
	s.interned[h] = v
	return v
}

// raw copies any value, as the json package does for a jsontext.Value, unless the
// scanner is told to alias the input (see UnmarshalResultPayload).
func (s *scanner) raw(dst *jsontext.Value) error {
	v, err := s.js.Value()
	if err == nil {
		if s.alias {
			*dst = v[:len(v):len(v)] // an append must not write over what follows
		} else {
			*dst = append(jsontext.Value(nil), v...)
		}
	}
	return err
}

func (s *scanner) readCall(f *field) error {
	c := &s.call
	switch string(f.name) {
	case "toolId":
		return s.str(&c.ToolID)
	case "callId":
		return s.str(&c.CallID)
	case "arguments":
		return s.raw(&c.Arguments)
	}
	return errSlowPath // after
}

func (s *scanner) readResult(f *field) error {
	r := &s.result
	switch string(f.name) {
	case "toolId":
		return s.str(&r.ToolID)
	case "message":
		return s.str(&r.Message)
	case "result":
		return s.raw(&r.Result)
	case "success":
		switch s.js.Peek() {
		case 't':
			r.Success = true
		case 'f':
			r.Success = false
		default:
			return errSlowPath
		}
		return s.js.Skip()
	}
	return errSlowPath // evidence
}

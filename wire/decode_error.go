package wire

import (
	"errors"
	"github.com/ansight-go/ansight/internal/jsonscan"
	"io"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DecodeError reports protocol input that the strict decoder refuses: malformed JSON,
// nesting deeper than [MaxDepth], duplicate or case-variant object keys, a value of the
// wrong type, a missing envelope field, a bad payload wrapper. A peer that sent a request
// the app cannot decode is answered with [CodeProtocolInvalidRequest] (or the
// message-specific payload code); errors.As(err, new(*DecodeError)) tells the two failure
// kinds (bad input versus a local fault) apart.
type DecodeError struct {
	// Path is the JSON Pointer (RFC 6901) of the offending value or key, "" for the root.
	Path string
	// Offset is the byte offset in the input at or after which the problem was found, or
	// -1 when unknown.
	Offset int64
	// Msg says what is wrong, without the location.
	Msg string
	// Err is the underlying error, if any (a jsontext syntax error, a base64 or gzip error).
	Err error
}

// Error implements error: "wire: <msg> at <path> (offset N)".
func (e *DecodeError) Error() string {
	b := make([]byte, 0, 64+len(e.Msg)+len(e.Path))
	b = append(b, "wire: "...)
	b = append(b, e.Msg...)
	if e.Path != "" {
		b = append(b, " at "...)
		b = append(b, jsonscan.Elide(e.Path, maxShownPath)...)
	}
	if e.Offset >= 0 {
		b = append(b, " (offset "...)
		b = strconv.AppendInt(b, e.Offset, 10)
		b = append(b, ')')
	}
	return string(b)
}

// maxShownPath bounds the path an error message shows: member names are the peer's, and a
// refusal must not echo megabytes of them back.
const maxShownPath = 256

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// decodeErrorf builds a DecodeError for a problem found by this package.
func decodeError(path string, offset int64, msg string) *DecodeError {
	return &DecodeError{Path: path, Offset: offset, Msg: msg}
}

// asDecodeError turns an error of the json or jsontext packages into a DecodeError that
// keeps its location. DecodeErrors pass through unchanged.
func asDecodeError(err error) error {
	if err == nil {
		return nil
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return de
	}
	if errors.Is(err, io.EOF) { // only a read at the top level ends cleanly: no value at all
		return &DecodeError{Offset: 0, Msg: "empty input: no JSON value", Err: io.ErrUnexpectedEOF}
	}
	if e, ok := err.(*jsonscan.Error); ok {
		if e.Depth {
			return &DecodeError{Path: e.Pointer(), Offset: int64(e.Offset), Msg: "JSON nesting exceeds the maximum depth of " + strconv.Itoa(MaxDepth), Err: err}
		}
		return &DecodeError{Path: e.Pointer(), Offset: int64(e.Offset), Msg: "invalid JSON: " + e.Msg, Err: err}
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		msg := "invalid JSON"
		if se.Err != nil {
			msg += ": " + se.Err.Error()
		}
		return &DecodeError{Path: string(se.JSONPointer), Offset: se.ByteOffset, Msg: msg, Err: err}
	}
	var me *json.SemanticError
	if errors.As(err, &me) {
		msg := "cannot decode"
		if me.JSONKind != 0 {
			msg += " JSON " + me.JSONKind.String()
		}
		if me.GoType != nil {
			msg += " into " + me.GoType.String()
		}
		if me.Err != nil {
			msg += ": " + me.Err.Error()
		}
		return &DecodeError{Path: string(me.JSONPointer), Offset: me.ByteOffset, Msg: msg, Err: err}
	}
	return &DecodeError{Offset: -1, Msg: err.Error(), Err: err}
}

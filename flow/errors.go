package flow

import (
	"errors"
	"fmt"
	"strings"
)

// Pos is a place in a flow file: line and column from 1 (columns count characters).
type Pos struct {
	File string `json:"file,omitzero"`
	Line int    `json:"line,omitzero"`
	Col  int    `json:"column,omitzero"`
}

// String returns "file:line:column", as compilers write it.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is one mistake in a flow: where it is, which step it is in (when in one), and what
// is wrong.
type Error struct {
	Pos Pos `json:"pos"`
	// Step names the step the mistake is in ("steps[2] (call notes.get)"), when it is in one.
	Step string `json:"step,omitzero"`
	Msg  string `json:"message"`
}

func (e *Error) Error() string {
	if e.Step != "" {
		return fmt.Sprintf("%s: %s: %s", e.Pos, e.Step, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
}

// maxErrors bounds the mistakes reported for one file: the first ones are what a person
// fixes first, and a file of garbage must not make a page of errors.
const maxErrors = 20

// ErrorList is every mistake found in a flow (at most 20), in file order; it is the error
// Load, Parse and Flow.Check return for a flow that cannot run.
type ErrorList []*Error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Errors returns the mistakes err carries: an ErrorList's, an *Error, or none.
func Errors(err error) []*Error {
	if l, ok := errors.AsType[ErrorList](err); ok {
		return l
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return []*Error{e}
	}
	return nil
}

// errorf builds an *Error at pos.
func errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

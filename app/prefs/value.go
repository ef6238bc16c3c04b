package prefs

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ansight-go/ansight/internal/flatargs"
	"github.com/ansight-go/ansight/wire"
)

// Type is the type of a preference value, as the official tools name it.
type Type string

// The value types.
const (
	String      Type = "string"
	Boolean     Type = "boolean"
	Integer     Type = "integer"
	Number      Type = "number"
	StringArray Type = "string_array"
	// Unsupported is what a store reports for a value of another type (prefs.get_value
	// gives its text as the store renders it; prefs.set_value never writes one).
	Unsupported Type = "unsupported"
)

// Value is a preference value: Type says which field holds it.
type Value struct {
	Type    Type
	String  string   // String, and the text of an Unsupported value
	Bool    bool     // Boolean
	Int     int64    // Integer
	Number  float64  // Number
	Strings []string // StringArray
}

// Text is the value as prefs.get_value returns it: a string as it is, a boolean as true or
// false, an integer in decimal, a number in the shortest form that reads back the same
// (exponents written E+NN, as .NET's round-trip format), a string array as JSON text.
func (v Value) Text() string {
	switch v.Type {
	case Boolean:
		return strconv.FormatBool(v.Bool)
	case Integer:
		return strconv.FormatInt(v.Int, 10)
	case Number:
		return strings.ToUpper(strconv.FormatFloat(v.Number, 'g', -1, 64))
	case StringArray:
		b, _ := wire.Marshal(nonNil(v.Strings))
		return string(b)
	}
	return v.String
}

// parseValue reads text as a value of type t, as prefs.set_value does: a boolean is true or
// false (any case), an integer a 64-bit decimal, a number a finite decimal, a string array
// a JSON array of strings.
func parseValue(t Type, text string) (Value, error) {
	v := Value{Type: t}
	if !utf8.ValidString(text) {
		return v, flatargs.Invalid("The value is not valid UTF-8.")
	}
	var err error
	switch t {
	case String:
		v.String = text
	case Boolean:
		switch {
		case strings.EqualFold(text, "true"):
			v.Bool = true
		case strings.EqualFold(text, "false"):
		default:
			err = flatargs.Invalid("The value '%s' is not a boolean (true or false).", text)
		}
	case Integer:
		if v.Int, err = strconv.ParseInt(text, 10, 64); err != nil {
			err = flatargs.Invalid("The value '%s' is not a 64-bit integer.", text)
		}
	case Number:
		if v.Number, err = strconv.ParseFloat(text, 64); err != nil || math.IsInf(v.Number, 0) || math.IsNaN(v.Number) {
			err = flatargs.Invalid("The value '%s' is not a finite number.", text)
		}
	case StringArray:
		if err = wire.Unmarshal([]byte(text), &v.Strings); err != nil || v.Strings == nil {
			err = flatargs.Invalid("The 'string_array' value must be a JSON string array.")
		}
	default:
		err = flatargs.Invalid("The value type '%s' is not supported.", t)
	}
	return v, err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

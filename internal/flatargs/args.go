package flatargs

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is an argument that is missing, given twice or not of its type. Its message is the
// official SDKs' ("The argument 'maxBytes' must be an integer.").
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func errorf(format string, a ...any) error { return &Error{msg: fmt.Sprintf(format, a...)} }

// Args are a flattened-string tool's arguments, names lower-cased.
type Args map[string]string

// New reads a tool's string map (app.Call.StringArguments).
func New(in map[string]string) (Args, error) {
	a := make(Args, len(in))
	for k, v := range in {
		l := strings.ToLower(k)
		if _, dup := a[l]; dup {
			return nil, errorf("The argument '%s' is given twice (names are matched regardless of case).", l)
		}
		a[l] = v
	}
	return a, nil
}

// Raw returns the value of name as sent, and whether it was.
func (a Args) Raw(name string) (string, bool) {
	v, ok := a[strings.ToLower(name)]
	return v, ok
}

// Str returns the trimmed value of name; blank and absent are the same.
func (a Args) Str(name string) string {
	v, _ := a.Raw(name)
	return strings.TrimSpace(v)
}

// Required returns the trimmed value of name, or the official SDKs' failure without it.
func (a Args) Required(name string) (string, error) {
	if v := a.Str(name); v != "" {
		return v, nil
	}
	return "", errorf("The argument '%s' is required.", name)
}

// Int returns name as a 32-bit integer clamped to lo..hi, def when blank or absent.
func (a Args) Int(name string, def, lo, hi int) (int, error) {
	n, err := a.parse(name, int64(def), int64(lo), int64(hi), 32)
	return int(n), err
}

// Int64 returns name as a 64-bit integer clamped to lo..hi, def when blank or absent.
func (a Args) Int64(name string, def, lo, hi int64) (int64, error) {
	return a.parse(name, def, lo, hi, 64)
}

func (a Args) parse(name string, def, lo, hi int64, bits int) (int64, error) {
	v := a.Str(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		return 0, errorf("The argument '%s' must be an integer.", name)
	}
	return max(lo, min(n, hi)), nil
}

// Bool returns name as a boolean, def when blank or absent.
func (a Args) Bool(name string, def bool) (bool, error) {
	switch v := a.Str(name); {
	case v == "":
		return def, nil
	case strings.EqualFold(v, "true") || v == "1":
		return true, nil
	case strings.EqualFold(v, "false") || v == "0":
		return false, nil
	}
	return false, errorf("The argument '%s' must be a boolean.", name)
}

// Invalid returns an argument failure of the caller's own (an unknown encoding, say).
func Invalid(format string, a ...any) error { return errorf(format, a...) }

// Schema writes a flattened-string tool's arguments schema from its properties (Prop), the
// required ones listed: a host reads the types to build its requests, the values still
// arrive as text.
func Schema(required []string, props ...string) string {
	req := ""
	if len(required) > 0 {
		req = `,"required":["` + strings.Join(required, `","`) + `"]`
	}
	return fmt.Sprintf(`{"type":"object","properties":{%s}%s}`, strings.Join(props, ","), req)
}

// Prop writes one property of Schema: its JSON Schema type (a JSON string or array of
// strings, as written in the schema) and its description.
func Prop(name, typ, description string) string {
	return fmt.Sprintf(`%q:{"type":%s,"description":%q}`, name, typ, description)
}

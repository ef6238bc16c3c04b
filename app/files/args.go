package files

import (
	"fmt"
	"strconv"
	"strings"
)

// args are the arguments of a flattened-string tool (argumentEncoding flattened-string):
// the official SDKs declare their file tools so, and read every argument from a string map
// with the rules below. A host may send a number or a string ("65536": the official
// download_file's nextRequest writes its integers as strings), a boolean or "true", "1",
// "0"; all arrive as the same text. Names are matched regardless of case, as in the
// official SDKs' map: args holds them lower-cased.
type args map[string]string

// newArgs reads a flattened-string tool's arguments. Two names that differ only in case
// are refused: which one the caller meant cannot be told.
func newArgs(in map[string]string) (args, error) {
	a := make(args, len(in))
	for k, v := range in {
		l := strings.ToLower(k)
		if _, dup := a[l]; dup {
			return nil, failure(reasonInvalidArgument, "The argument '%s' is given twice (names are matched regardless of case).", l)
		}
		a[l] = v
	}
	return a, nil
}

// lookup returns the raw value of name.
func (a args) lookup(name string) (string, bool) {
	v, ok := a[strings.ToLower(name)]
	return v, ok
}

// str returns the trimmed value of name; blank and absent are the same.
func (a args) str(name string) string {
	v, _ := a.lookup(name)
	return strings.TrimSpace(v)
}

// required returns the value of name, or the failure the official SDKs give without it.
func (a args) required(name string) (string, error) {
	if v := a.str(name); v != "" {
		return v, nil
	}
	return "", failure(reasonInvalidArgument, "The argument '%s' is required.", name)
}

// integer returns name as a 32-bit integer clamped to lo..hi, def when blank or absent; a
// value that is not an integer is an error (not clamped, not ignored).
func (a args) integer(name string, def, lo, hi int) (int, error) {
	n, err := a.long(name, int64(def), int64(lo), int64(hi), 32)
	return int(n), err
}

// long is integer for 64-bit values (bits 64) or 32-bit ones.
func (a args) long(name string, def, lo, hi int64, bits int) (int64, error) {
	v := a.str(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		return 0, failure(reasonInvalidArgument, "The argument '%s' must be an integer.", name)
	}
	return max(lo, min(n, hi)), nil
}

// boolean returns name as a boolean: true or false in any case, or 1 or 0; def when blank
// or absent.
func (a args) boolean(name string, def bool) (bool, error) {
	switch v := a.str(name); {
	case v == "":
		return def, nil
	case strings.EqualFold(v, "true") || v == "1":
		return true, nil
	case strings.EqualFold(v, "false") || v == "0":
		return false, nil
	}
	return false, failure(reasonInvalidArgument, "The argument '%s' must be a boolean.", name)
}

// Encodings of content in results, as requested (auto, utf8, base64).
const (
	encodingAuto   = "auto"
	encodingUTF8   = "utf8"
	encodingBase64 = "base64"
)

// encoding returns the requested encoding: auto (the default), utf8 (also utf-8) or base64,
// in any case.
func (a args) encoding() (string, error) {
	switch v := strings.ToLower(a.str("encoding")); v {
	case "", encodingAuto:
		return encodingAuto, nil
	case encodingUTF8, "utf-8":
		return encodingUTF8, nil
	case encodingBase64:
		return encodingBase64, nil
	}
	return "", failure(reasonInvalidArgument, "The argument 'encoding' must be one of: auto, utf8, base64.")
}

// schemaOf writes a flattened-string tool's arguments schema: the properties as the
// official SDKs publish them (a host reads their types to build its requests; the values
// still arrive as text), required ones listed.
func schemaOf(required []string, props ...string) string {
	req := ""
	if len(required) > 0 {
		req = `,"required":["` + strings.Join(required, `","`) + `"]`
	}
	return fmt.Sprintf(`{"type":"object","properties":{%s}%s}`, strings.Join(props, ","), req)
}

// prop writes one property of schemaOf.
func prop(name, typ, description string) string {
	return fmt.Sprintf(`%q:{"type":%s,"description":%q}`, name, typ, description)
}

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tailscale/hujson"
)

// maxInputBytes bounds a JSON input read from a file or standard input.
const maxInputBytes = 16 << 20

// maxInputDepth bounds the nesting of a JSON input: the JWCC parser recurses, and a few
// million brackets would exhaust its stack.
const maxInputDepth = 1000

// jsonInput reads a JSON value given inline (--x) or as a file (--x-file); "-" in either
// means standard input. Absent both, it returns def.
//
// Like the official CLI, it accepts JSON with comments and trailing commas (JWCC, "human
// JSON"): the input is standardized by a JWCC parser, then checked as strictly as plain
// JSON (duplicate names are refused).
func (g *globals) jsonInput(flagName, inline, file string, def string) (jsontext.Value, error) {
	if inline != "" && file != "" {
		return nil, usageErrorf("give --%s or --%s-file, not both", flagName, flagName)
	}
	var data []byte
	switch {
	case inline == "-" || file == "-":
		b, err := io.ReadAll(io.LimitReader(g.env.Stdin, maxInputBytes+1))
		if err != nil {
			return nil, fmt.Errorf("read --%s from standard input: %w", flagName, err)
		}
		data = b
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return nil, usageErrorf("--%s-file: %v", flagName, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxInputBytes+1))
		if err != nil {
			return nil, fmt.Errorf("--%s-file: %w", flagName, err)
		}
		data = b
	case inline != "":
		data = []byte(inline)
	default:
		data = []byte(def)
	}
	if len(data) > maxInputBytes {
		return nil, usageErrorf("--%s: larger than %d bytes", flagName, maxInputBytes)
	}
	v, err := parseJWCC(data)
	if err != nil {
		return nil, usageErrorf("--%s is not valid JSON: %v", flagName, err)
	}
	return v, nil
}

// parseJWCC returns data, JSON with comments and trailing commas allowed, as compact
// standard JSON. Plain JSON takes the fast path.
func parseJWCC(data []byte) (jsontext.Value, error) {
	v := jsontext.Value(bytes.TrimSpace(data))
	if len(v) == 0 {
		return v, nil
	}
	plain := v.Clone()
	if plain.Compact(strict...) == nil {
		return plain, nil
	}
	if d := jwccDepth(v); d > maxInputDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxInputDepth)
	}
	std, err := hujson.Standardize(bytes.Clone(v))
	if err != nil {
		return nil, withoutParserName(err)
	}
	out := jsontext.Value(std)
	if err := out.Compact(strict...); err != nil {
		return nil, withoutParserName(err)
	}
	return out, nil
}

// withoutParserName is err without the parser's package name ("hujson: line 1, column
// 13: …"): the user wrote JSON, not a hujson or jsontext value.
func withoutParserName(err error) error {
	msg := err.Error()
	for _, p := range []string{"hujson: ", "jsontext: "} {
		if s, ok := strings.CutPrefix(msg, p); ok {
			return errors.New(s)
		}
	}
	return err
}

// strict refuses what Compact lets through by default: duplicate names, invalid UTF-8.
var strict = []jsontext.Options{jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false)}

// jwccDepth returns the deepest nesting of arrays and objects in JWCC text, skipping
// strings and comments. It only bounds the parser's work; the parser judges the syntax.
func jwccDepth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return deepest
			}
			i += end + 3
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

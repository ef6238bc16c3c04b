package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/go-json-experiment/json/jsontext"
)

// maxInputBytes bounds a JSON input read from a file or standard input.
const maxInputBytes = 16 << 20

// jsonInput reads a JSON value given inline (--x) or as a file (--x-file); "-" in either
// means standard input. Absent both, it returns def.
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
	v := jsontext.Value(bytes.TrimSpace(data))
	if err := v.Compact(); err != nil {
		return nil, usageErrorf("--%s is not valid JSON: %v", flagName, err)
	}
	return v, nil
}

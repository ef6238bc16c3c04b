package cli

import (
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Schemas of the JSON outputs. A schema changes name when its shape changes incompatibly.
const (
	schemaError   = "ansight.cli.error/v1"
	schemaVersion = "ansight.cli.version/v1"
)

type errorOutput struct {
	Schema string    `json:"schema"`
	Error  errorBody `json:"error"`
}

type errorBody struct {
	Code     string `json:"code,omitzero"`
	Message  string `json:"message"`
	ExitCode int    `json:"exitCode"`
	Hint     string `json:"hint,omitzero"`
}

type versionOutput struct {
	Schema  string `json:"schema"`
	Version string `json:"version"`
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v, json.Deterministic(true), jsontext.Multiline(true), jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

package session

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// ErrMalformed is wrapped by every parse error of this package: the input is not a control
// message of the expected shape.
var ErrMalformed = errors.New("session: malformed message")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// decodeStrict is the package's only JSON decoding entry point, wire's strict decoder:
// duplicate and case-variant member names are rejected, names match case-sensitively,
// depth and size are bounded. Unknown members are ignored, because the official SDKs add
// fields between versions and must keep working.
func decodeStrict(data []byte, v any) error {
	if err := wire.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}

func encode(v any) ([]byte, error) { return wire.Marshal(v) }

// raw is one member of an object decoded only as far as its presence: nil when the key was
// absent, "null" when it was an explicit null.
type raw = jsontext.Value

func isNull(v raw) bool { return len(v) == 4 && string(v) == "null" }

// requiredString reads a member that must be present; an explicit null reads as "" (the
// official host accepts null and then fails its blank checks).
func requiredString(name string, v raw) (string, error) {
	if v == nil {
		return "", malformed("%q is missing", name)
	}
	return optionalString(name, v)
}

// optionalString reads a member that may be absent or null.
func optionalString(name string, v raw) (string, error) {
	if v == nil || isNull(v) {
		return "", nil
	}
	if v.Kind() != '"' {
		return "", malformed("%q is not a string", name)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", malformed("%q: %v", name, err)
	}
	return s, nil
}

// strPtr maps "" to a JSON null when marshaling.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

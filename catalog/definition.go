package catalog

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// MaxIDLength is the longest tool id Check accepts.
const MaxIDLength = 128

// Definition is a tool's static definition (docs/protocol/catalog.md#tool-definitions) as a developer registers it.
//
// ArgumentsSchema and ResultSchema are JSON Schema 2020-12 documents in the protocol's
// closed-object form (an object schema without additionalProperties admits no additional
// properties); both are required, and the arguments schema must be an object schema.
// ArgumentEncoding is "" or "json" (the default) or "flattened-string" for legacy tools.
type Definition struct {
	ID                  string
	Name                string
	Description         string
	Category            string
	Policy              wire.Policy
	ArgumentsSchema     jsontext.Value
	ResultSchema        jsontext.Value
	Keywords            string
	PrerequisiteToolIDs []string
	ArgumentEncoding    string
}

// Check validates d at registration time and returns every problem found, joined. It
// compiles both schemas (compiled schemas are cached, so a later NewSet does not pay
// again).
func (d *Definition) Check() error {
	_, _, err := d.check()
	return err
}

// check is Check, returning the compiled schemas when d is valid.
func (d *Definition) check() (args, result *schema.Schema, err error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if err := CheckID(d.ID); err != nil {
		errs = append(errs, err)
	}
	label := d.ID
	if label == "" {
		label = "(no id)"
	}
	for _, f := range [...]struct{ name, value string }{
		{"name", d.Name}, {"description", d.Description}, {"category", d.Category}, {"keywords", d.Keywords},
	} {
		if !utf8.ValidString(f.value) {
			bad("catalog: tool %q: %s is not valid UTF-8", label, f.name)
		}
	}
	if strings.TrimSpace(d.Name) == "" {
		bad("catalog: tool %q: name is empty", label)
	}
	if strings.TrimSpace(d.Description) == "" {
		bad("catalog: tool %q: description is empty", label)
	}
	if strings.TrimSpace(d.Category) == "" {
		bad("catalog: tool %q: category is empty", label)
	}
	if !d.Policy.Valid() {
		bad("catalog: tool %q: policy %q is not read, write or critical", label, string(d.Policy))
	}
	switch d.ArgumentEncoding {
	case "", wire.ArgumentEncodingJSON, wire.ArgumentEncodingFlattenedString:
	default:
		bad("catalog: tool %q: argumentEncoding %q is not %q or %q", label, d.ArgumentEncoding,
			wire.ArgumentEncodingJSON, wire.ArgumentEncodingFlattenedString)
	}
	if args, err = compileArguments(d.ArgumentsSchema); err != nil {
		bad("catalog: tool %q: argumentsSchema: %w", label, err)
	}
	if result, err = compileResult(d.ResultSchema); err != nil {
		bad("catalog: tool %q: resultSchema: %w", label, err)
	}
	for _, p := range d.PrerequisiteToolIDs {
		if p = strings.TrimSpace(p); p != "" {
			if err := CheckID(p); err != nil {
				bad("catalog: tool %q: prerequisiteToolIds: %w", label, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return args, result, nil
}

// CheckID validates a tool id: non-empty, at most MaxIDLength bytes, made of ASCII letters,
// digits, '_', '-' and '.', with dots only between non-empty segments (e.g.
// "ui.perform_action").
func CheckID(id string) error {
	switch {
	case id == "":
		return errors.New("catalog: tool id is empty")
	case len(id) > MaxIDLength:
		return fmt.Errorf("catalog: tool id %.40q… is %d bytes long (at most %d)", id, len(id), MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		case c == '.':
			if i == 0 || i == len(id)-1 || id[i-1] == '.' {
				return fmt.Errorf("catalog: tool id %q has an empty dotted segment", id)
			}
		default:
			return fmt.Errorf("catalog: tool id %q contains %q (allowed: letters, digits, '_', '-', '.')", id, rune(c))
		}
	}
	return nil
}

// compileArguments compiles an arguments schema, which must be present and describe an
// object (its top-level type is "object").
func compileArguments(raw jsontext.Value) (*schema.Schema, error) {
	s, err := compileResult(raw)
	if err != nil {
		return nil, err
	}
	if !s.IsObject() {
		return nil, errors.New(`arguments schema must be an object schema ("type": "object")`)
	}
	return s, nil
}

// compileResult compiles a required schema.
func compileResult(raw jsontext.Value) (*schema.Schema, error) {
	if len(raw) == 0 {
		return nil, errors.New("schema is missing")
	}
	return schema.Compile(raw)
}

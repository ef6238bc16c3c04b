package catalog

import "github.com/go-json-experiment/json/jsontext"

// plan is the allocation-free validator for the keywords that tool schemas use.
type plan struct{}

// compilePlan returns nil when the schema needs the general validator.
func compilePlan(*node) *plan { return nil }

// validate reports ok=false when the general validator must decide.
func (p *plan) validate(jsontext.Value) ([]Violation, bool) { return nil, false }

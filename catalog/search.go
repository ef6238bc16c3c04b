package catalog

import (
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// Search is free text split into terms the way a query's "query" and "feature" are
// (docs/protocol/catalog.md#search-text): lower-cased, split on everything that is not a letter or digit, each term
// required as a substring of a tool's searchable text. Hosts use it to filter the entries
// of a catalog they hold with the same rules the app applies.
type Search []string

// ParseSearch compiles free texts into one search; their terms are AND-ed.
func ParseSearch(texts ...string) Search {
	var terms []string
	for _, s := range texts {
		terms = queryTerms(terms, s)
	}
	return terms
}

// Matches reports whether every term occurs in the entry's id, name, description,
// category, keywords or prerequisite ids. An empty search matches everything.
func (s Search) Matches(e *wire.ToolEntry) bool {
	if len(s) == 0 {
		return true
	}
	parts := append([]string{e.ID, e.Name, e.Description, e.Category, e.Keywords}, e.PrerequisiteToolIDs...)
	return matchesTerms(normalizeText(strings.Join(parts, " ")), s)
}

// MatchesWithSchemas is Matches over the entry's schemas too: the names of the properties
// its argumentsSchema and resultSchema declare, and their titles, descriptions and enum
// and const strings (not JSON Schema's own keywords, which every schema has). Hosts use it
// for their own searches, as the official host does; the app's tool.query searches the
// index text alone (docs/protocol/catalog.md#search-text). An entry without schemas (an index entry) is searched as by
// Matches.
func (s Search) MatchesWithSchemas(e *wire.ToolEntry) bool {
	if s.Matches(e) {
		return true
	}
	if len(s) == 0 || len(e.ArgumentsSchema) == 0 && len(e.ResultSchema) == 0 {
		return false
	}
	parts := append([]string{e.ID, e.Name, e.Description, e.Category, e.Keywords}, e.PrerequisiteToolIDs...)
	parts = schemaWords(parts, e.ArgumentsSchema)
	parts = schemaWords(parts, e.ResultSchema)
	return matchesTerms(normalizeText(strings.Join(parts, " ")), s)
}

// schemaWords appends a schema's searchable strings to dst. Schemas reach a host bounded
// (CheckSchemaBounds), so the walk is too.
func schemaWords(dst []string, schema jsontext.Value) []string {
	if len(schema) == 0 {
		return dst
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return dst
	}
	var walk func(v any, props bool)
	walk = func(v any, props bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if props { // the members of "properties": property names
					dst = append(dst, k)
					walk(x, false)
					continue
				}
				switch k {
				case "title", "description", "const":
					if s, ok := x.(string); ok {
						dst = append(dst, s)
					}
				case "enum":
					if list, ok := x.([]any); ok {
						for _, e := range list {
							if s, ok := e.(string); ok {
								dst = append(dst, s)
							}
						}
					}
				case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
					walk(x, true)
				default:
					walk(x, false)
				}
			}
		case []any:
			for _, x := range v {
				walk(x, false)
			}
		}
	}
	walk(v, false)
	return dst
}

package catalog

import (
	"strings"

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

package catalog

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// TestSearchSchemas: a host's search finds a tool by the properties, titles, descriptions
// and enum values of its schemas, never by JSON Schema's own keywords.
func TestSearchSchemas(t *testing.T) {
	t.Parallel()
	e := wire.ToolEntry{ID: "maps.route", Name: "Route", Description: "Plans a route.",
		ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"destinationLatitude":{"type":"number","description":"Degrees north"},` +
			`"mode":{"enum":["walking","cycling"]},"nested":{"type":"object","properties":{"avoidTolls":{"type":"boolean"}}}}}`),
		ResultSchema: jsontext.Value(`{"type":"object","title":"Itinerary","properties":{"durationSeconds":{"type":"integer"}}}`)}
	index := e
	index.ArgumentsSchema, index.ResultSchema = nil, nil
	for _, c := range []struct {
		query string
		want  bool
	}{
		{"route", true},
		{"destinationlatitude", true},
		{"latitude north", true},
		{"cycling", true},
		{"avoidtolls", true},
		{"itinerary duration", true},
		{"properties", false},
		{"boolean", false},
		{"object", false},
		{"route ferry", false},
	} {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			s := ParseSearch(c.query)
			if got := s.MatchesWithSchemas(&e); got != c.want {
				t.Errorf("MatchesWithSchemas(%q) = %v, want %v", c.query, got, c.want)
			}
			if s.MatchesWithSchemas(&index) != s.Matches(&index) {
				t.Errorf("an index entry is searched as by Matches")
			}
		})
	}
}

package catalog

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestStandardSchemaRestoresClosedObjects(t *testing.T) {
	in := jsontext.Value(`{"type":"object","properties":{"ref":{"type":"object","properties":{"id":{"type":"string"}}},"open":{"type":"object","additionalProperties":true}}}`)
	got := string(StandardSchema(in))
	want := `{"type":"object","properties":{"ref":{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false},"open":{"type":"object","additionalProperties":true}},"additionalProperties":false}`
	if got != want {
		t.Errorf("StandardSchema:\n got %s\nwant %s", got, want)
	}
	if back := string(PublishedSchema(jsontext.Value(got))); back != string(in) {
		t.Errorf("PublishedSchema(StandardSchema(x)) = %s, want %s", back, in)
	}
}

package schema

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestStandardSchemaRestoresClosedObjects(t *testing.T) {
	t.Parallel()
	in := jsontext.Value(`{"type":"object","properties":{"ref":{"type":"object","properties":{"id":{"type":"string"}}},"open":{"type":"object","additionalProperties":true}}}`)
	got := string(Standard(in))
	want := `{"type":"object","properties":{"ref":{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false},"open":{"type":"object","additionalProperties":true}},"additionalProperties":false}`
	if got != want {
		t.Errorf("Standard:\n got %s\nwant %s", got, want)
	}
	if back := string(Published(jsontext.Value(got))); back != string(in) {
		t.Errorf("Published(Standard(x)) = %s, want %s", back, in)
	}
}

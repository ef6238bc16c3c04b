package flow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/schema"
)

// publishedSchema compiles schema/flow.v1.json, the format's published JSON Schema,
// through the schema package as any tool would read it.
func publishedSchema(t *testing.T) *schema.Schema {
	t.Helper()
	raw, err := os.ReadFile("../schema/flow.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile(raw)
	if err != nil {
		t.Fatalf("schema/flow.v1.json does not compile: %v", err)
	}
	return s
}

// TestSchemaFixtures holds the published schema and the loader to the same fixtures: each
// valid flow matches it, each invalid one is refused by it too, unless its mistake is one
// a schema cannot see (a variable with no value, an include cycle: "schema: accepts") or
// the file is not a JSON value at all ("schema: unreadable").
func TestSchemaFixtures(t *testing.T) {
	t.Parallel()
	s := publishedSchema(t)
	valid, _ := filepath.Glob("testdata/valid/*.*")
	included, _ := filepath.Glob("testdata/valid/included/*.*")
	for _, p := range append(valid, included...) {
		t.Run("valid/"+filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			root := readFixture(t, p)
			if vs := s.Validate(root.json()); len(vs) > 0 {
				t.Errorf("the schema refuses a valid flow: %v", vs)
			}
		})
	}
	for _, fx := range invalidFixtures(t) {
		t.Run("invalid/"+filepath.Base(fx.path), func(t *testing.T) {
			t.Parallel()
			data, _ := os.ReadFile(fx.path)
			root, err := readFile(fx.path, data)
			if fx.schema == "unreadable" {
				if err == nil {
					t.Fatal("the file was read")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			vs := s.Validate(root.json())
			switch fx.schema {
			case "accepts":
				if len(vs) > 0 {
					t.Errorf("the schema refuses it: %v", vs)
				}
			default:
				if len(vs) == 0 {
					t.Errorf("the schema accepts a flow the loader refuses for %q", fx.text)
				}
			}
		})
	}
}

func readFixture(t *testing.T, path string) *value {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root, err := readFile(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestSchemaNamesEveryKey: every key the loader takes is a property of the schema, so the
// two cannot drift apart silently.
func TestSchemaNamesEveryKey(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../schema/flow.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	var keys []string
	keys = append(keys, flowKeys...)
	for _, list := range stepKeys {
		keys = append(keys, list...)
	}
	for _, list := range uiKeys {
		keys = append(keys, list...)
	}
	keys = append(keys, operators...)
	for _, k := range keys {
		if !strings.Contains(text, `"`+k+`":`) {
			t.Errorf("the schema does not name %q", k)
		}
	}
}

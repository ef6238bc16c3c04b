package catalog

import (
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// revisionVectors mirrors testdata/revision-vectors.json, the protocol's revision test
// vectors (docs/protocol/catalog.md#test-vectors).
type revisionVectors struct {
	Definitions []struct {
		Definition struct {
			ID                  string         `json:"id"`
			Name                string         `json:"name"`
			Description         string         `json:"description"`
			Category            string         `json:"category"`
			Policy              wire.Policy    `json:"policy"`
			ArgumentsSchema     jsontext.Value `json:"argumentsSchema"`
			ResultSchema        jsontext.Value `json:"resultSchema"`
			Keywords            string         `json:"keywords"`
			PrerequisiteToolIDs []string       `json:"prerequisiteToolIds"`
			ArgumentEncoding    string         `json:"argumentEncoding"`
		} `json:"definition"`
		Canonical          string `json:"canonical"`
		DefinitionRevision string `json:"definitionRevision"`
	} `json:"definitions"`
	Catalogs []struct {
		Guard struct {
			DiscoveryEnabled bool        `json:"discoveryEnabled"`
			ExecutionEnabled bool        `json:"executionEnabled"`
			MaxPolicy        wire.Policy `json:"maxPolicy"`
		} `json:"guard"`
		VisibleToolIDs                       []string `json:"visibleToolIds"`
		RevisionInput                        string   `json:"revisionInput"`
		Revision                             string   `json:"revision"`
		AvailabilityAllAvailable             string   `json:"availabilityAllAvailable"`
		AvailabilityWithNotesListUnavailable struct {
			Input                string `json:"input"`
			AvailabilityRevision string `json:"availabilityRevision"`
		} `json:"availabilityWithNotesListUnavailable"`
	} `json:"catalogs"`
}

func loadVectors(t testing.TB) (*revisionVectors, []Definition) {
	t.Helper()
	data, err := os.ReadFile("testdata/revision-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v revisionVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var defs []Definition
	for _, d := range v.Definitions {
		x := d.Definition
		defs = append(defs, Definition{
			ID: x.ID, Name: x.Name, Description: x.Description, Category: x.Category, Policy: x.Policy,
			ArgumentsSchema: x.ArgumentsSchema, ResultSchema: x.ResultSchema, Keywords: x.Keywords,
			PrerequisiteToolIDs: x.PrerequisiteToolIDs, ArgumentEncoding: x.ArgumentEncoding,
		})
	}
	return &v, defs
}

func TestRevisionVectors(t *testing.T) {
	t.Parallel()
	v, defs := loadVectors(t)
	for i, d := range v.Definitions {
		tool, err := newTool(&defs[i])
		if err != nil {
			t.Fatalf("%s: %v", d.Definition.ID, err)
		}
		static, err := appendStatic(nil, &tool.Def, tool.Args.Published(), tool.Result.Published())
		if err != nil {
			t.Fatal(err)
		}
		canon := jsontext.Value(static)
		if err := canon.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		direct, err := appendStaticCanonical(nil, &tool.Def, tool.Args.Canonical(), tool.Result.Canonical())
		if err != nil || string(direct) != d.Canonical {
			t.Errorf("%s direct canonical form:\n got %s\nwant %s (%v)", d.Definition.ID, direct, d.Canonical, err)
		}
		if string(canon) != d.Canonical {
			t.Errorf("%s canonical:\n got %s\nwant %s", d.Definition.ID, canon, d.Canonical)
		}
		if tool.DefinitionRevision != d.DefinitionRevision {
			t.Errorf("%s definitionRevision = %s, want %s", d.Definition.ID, tool.DefinitionRevision, d.DefinitionRevision)
		}
	}
	for _, c := range v.Catalogs {
		g := Guard{c.Guard.DiscoveryEnabled, c.Guard.ExecutionEnabled, c.Guard.MaxPolicy}
		s, err := NewSet(defs, g)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tool := range s.Visible() {
			ids = append(ids, tool.Def.ID)
		}
		if want := c.VisibleToolIDs; !equalStrings(ids, want) {
			t.Errorf("guard %v: visible %v, want %v", g, ids, want)
		}
		if s.Revision() != c.Revision {
			t.Errorf("guard %v: revision %s, want %s", g, s.Revision(), c.Revision)
		}
		if got := s.availabilityOf(nil).revision; got != c.AvailabilityAllAvailable {
			t.Errorf("guard %v: all-available revision %s, want %s", g, got, c.AvailabilityAllAvailable)
		}
		down := map[string]wire.Runtime{"notes.list": {Code: "store_locked", Reason: "Unlock the note store first.", Remediation: "Call notes.unlock.", Retryable: true}}
		if got := s.availabilityOf(down).revision; got != c.AvailabilityWithNotesListUnavailable.AvailabilityRevision {
			t.Errorf("guard %v: availability revision %s, want %s", g, got, c.AvailabilityWithNotesListUnavailable.AvailabilityRevision)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

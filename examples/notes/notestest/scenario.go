package notestest

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/wire"
)

// ConformanceScenario tells the conformance suite how to exercise the notes app's optional
// behaviours: signing in makes the sync tools available (signing out undoes it), a large
// compressible result, and a generated file streamed over ASFT.
func ConformanceScenario() conformance.Scenario {
	return conformance.Scenario{
		ToggleAvailability:  []wire.Call{{ToolID: "account.sign_in", Arguments: jsontext.Value(`{"userName":"conformance"}`)}},
		RestoreAvailability: []wire.Call{{ToolID: "account.sign_out", Arguments: jsontext.Value(`{}`)}},
		LargeResult:         &wire.Call{ToolID: "data.large_result", Arguments: jsontext.Value(`{"sizeBytes":100000}`)},
		Artifact:            &wire.Call{ToolID: "files.generate", Arguments: jsontext.Value(`{"sizeBytes":200000,"pattern":"random"}`)},
	}
}

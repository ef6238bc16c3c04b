package catalog_test

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

func ExampleSet_Answer() {
	set, err := catalog.NewSet([]catalog.Definition{{
		ID: "notes.list", Name: "List Notes", Description: "Lists notes, newest first.",
		Category: "notes", Policy: wire.PolicyRead,
		ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"limit":{"type":"integer","minimum":1}}}`),
		ResultSchema:    jsontext.Value(`{"type":"object","additionalProperties":true}`),
	}}, catalog.GuardReadOnly)
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)

	// A host that already holds the current revision gets the 3-key answer.
	unchanged, _ := set.Answer(&wire.Query{IfRevision: set.Revision()}, nil, now)
	fmt.Println(string(unchanged) == `{"schema":"ansight.tool-catalog.v3","revision":"`+set.Revision()+`","unchanged":true}`)

	// An index lists every visible tool; unavailable ones carry their runtime.
	down := map[string]wire.Runtime{"notes.list": {Code: "store_locked", Retryable: true}}
	index, _ := set.Answer(&wire.Query{Detail: "index"}, down, now)
	var c wire.Catalog
	if err := wire.Unmarshal(index, &c); err != nil {
		panic(err)
	}
	fmt.Println(c.Tools[0].ID, c.Tools[0].IsExecutable(), c.Tools[0].Runtime.Code, *c.TotalCount, c.Categories)
	// Output:
	// true
	// notes.list false store_locked 1 map[notes:1]
}

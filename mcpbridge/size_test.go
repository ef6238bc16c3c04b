package mcpbridge

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/wire"
)

// syntheticCatalog is n tools shaped like real app tools: dotted ids over ten categories, a
// one-line description followed by details, keywords, an argument schema of four described
// properties and a result schema; mostly read, some write, a few critical.
func syntheticCatalog(n int) []wire.ToolEntry {
	categories := []string{"notes", "settings", "account", "sync", "files", "media", "network", "storage", "diagnostics", "ui"}
	verbs := []string{"get", "list", "set", "find", "export", "refresh", "inspect", "count"}
	out := make([]wire.ToolEntry, n)
	for i := range out {
		cat, verb := categories[i%len(categories)], verbs[(i/len(categories))%len(verbs)]
		policy := wire.PolicyRead
		switch {
		case i%20 == 19:
			policy = wire.PolicyCritical
		case i%4 == 3:
			policy = wire.PolicyWrite
		}
		e := wire.ToolEntry{
			ID:       fmt.Sprintf("%s.%s_item_%d", cat, verb, i),
			Name:     fmt.Sprintf("%s %s item %d", verb, cat, i),
			Category: cat,
			Policy:   policy,
			Description: fmt.Sprintf("%s the %s item %d with its state, counters and last error.\n"+
				"Returns at most maxResults entries; use the cursor to page. Fails with %s_not_found when the item does not exist.", verb, cat, i, cat),
			Keywords: fmt.Sprintf("%s %s item state counters", cat, verb),
			ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{` +
				`"id":{"type":"string","minLength":1,"maxLength":64,"description":"Item id, as the list tool returns it."},` +
				`"maxResults":{"type":"integer","minimum":1,"maximum":500,"default":50,"description":"Most entries to return."},` +
				`"cursor":{"type":"string","maxLength":256,"description":"Opaque cursor from a previous answer."},` +
				`"includeHistory":{"type":"boolean","default":false,"description":"Also return the change history."}},` +
				`"required":["id"]}`),
			ResultSchema: jsontext.Value(`{"type":"object","properties":{` +
				`"id":{"type":"string"},"state":{"enum":["idle","busy","failed"]},` +
				`"counters":{"type":"object","additionalProperties":{"type":"integer"}},` +
				`"lastError":{"type":"string"},"updatedAtUtc":{"type":"string","format":"date-time"},` +
				`"cursor":{"type":"string","description":"Present when more entries follow."}},"required":["id","state"]}`),
			DefinitionRevision: fmt.Sprintf("sha256:%064x", i),
		}
		if i%10 == 5 {
			e.PrerequisiteToolIDs = []string{fmt.Sprintf("%s.list_item_%d", cat, i%len(categories))}
		}
		out[i] = e
	}
	return out
}

// TestSearchAnswerSize measures the search answer for default arguments against listing
// every tool with its schemas (what a bridge exposing each tool sends in tools/list).
func TestSearchAnswerSize(t *testing.T) {
	t.Parallel()
	const budget = 8 << 10
	for _, n := range []int{50, 500} {
		f := newFakeBackend(t)
		f.addSession("s1", "com.example.big", wire.PolicyWrite, syntheticCatalog(n))
		h := newHarness(t, f, Options{})
		res := h.call(ToolSearchAppTools, nil)
		var out searchOutput
		answer := text(t, res, &out)
		wholeResult, _ := json.Marshal(res) // text and structured content both, as on the wire

		largest := text(t, h.call(ToolSearchAppTools, map[string]any{"maxResults": maxMaxResults}), nil)

		var every []*mcp.Tool
		var ids []string
		for _, e := range syntheticCatalog(n) {
			ids = append(ids, e.ID)
		}
		names := exposedNames(ids)
		for _, e := range syntheticCatalog(n) {
			tl, _, err := mcpTool(&e, names, SchemaExact)
			if err != nil {
				t.Fatal(err)
			}
			every = append(every, tl)
		}
		listing, _ := json.Marshal(mcp.ListToolsResult{Tools: every})
		meta, _ := json.Marshal(mcp.ListToolsResult{Tools: h.listTools()})

		msg := fmt.Sprintf("%d tools: search answer %d B (whole tools/call result %d B, %d of %d offered tools, truncated %v; "+
			"%d B with maxResults %d); every tool with schemas %d B; the six meta-tools' tools/list %d B",
			n, len(answer), len(wholeResult), out.Count, out.TotalCount, out.Truncated, len(largest), maxMaxResults, len(listing), len(meta))
		t.Log(msg)
		if testing.Verbose() {
			fmt.Println(msg)
		}
		if len(answer) > budget {
			t.Errorf("%d tools: the search answer is %d bytes, over %d", n, len(answer), budget)
		}
	}
}

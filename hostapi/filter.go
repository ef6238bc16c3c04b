package hostapi

import (
	"slices"
	"strings"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// FilterTools applies a ToolsRequest's filters (not MaxResults) to catalog entries,
// returning a new slice. Terms match as the app's own query filter does, and in the
// entries' schemas too when they carry them.
func FilterTools(entries []wire.ToolEntry, req ToolsRequest) []wire.ToolEntry {
	search := catalog.ParseSearch(req.Query, req.Feature)
	var policy wire.Policy
	if req.Policy != "" {
		policy, _ = wire.ParsePolicy(req.Policy)
	}
	out := make([]wire.ToolEntry, 0, len(entries))
	for _, e := range entries {
		switch {
		case len(req.ToolIDs) > 0 && !slices.Contains(req.ToolIDs, e.ID):
		case !strings.HasPrefix(e.ID, req.IDPrefix):
		case req.Category != "" && e.Category != req.Category:
		case req.Policy != "" && e.Policy != policy:
		case req.ExecutableOnly && (e.Denial != nil || !e.IsExecutable()):
		case !search.MatchesWithSchemas(&e):
		default:
			out = append(out, e)
		}
	}
	return out
}

package app

import (
	"context"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// defaultEvidence is what an after block without include captures.
var defaultEvidence = []string{wire.EvidenceVisualTree}

// evidenceTool maps an evidence name of after.include to the tool that captures it.
func evidenceTool(name string) (string, bool) {
	switch name {
	case wire.EvidenceVisualTree, "tree", "visual_tree":
		return wire.VisualTreeToolID, true
	case wire.EvidenceScreenshot:
		return wire.ScreenshotToolID, true
	}
	return "", false
}

// evidence captures the post-call evidence c.After asks for (docs/protocol/calls.md#evidence): after the delay,
// each named capture runs through the same path as a call (guard, availability, schemas)
// and is stored under the name as given. A failed capture is recorded as a failed outcome;
// it does not fail the call. A name that maps to the invoked tool itself is skipped.
func (x *exchange) evidence(ctx context.Context, c wire.Call) map[string]wire.Outcome {
	after := c.After
	names := after.Include
	if names == nil {
		names = defaultEvidence
	}
	if len(names) == 0 {
		return nil
	}
	if after.DelayMilliseconds > 0 {
		timer := time.NewTimer(time.Duration(after.DelayMilliseconds) * time.Millisecond)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
	}
	var out map[string]wire.Outcome
	for _, name := range names {
		if _, done := out[name]; done {
			continue
		}
		id, _ := evidenceTool(name) // names were checked by checkAfter
		if id == c.ToolID {
			continue
		}
		args := after.VisualTreeArguments
		if id == wire.ScreenshotToolID {
			args = after.ScreenshotArguments
		}
		if out == nil {
			out = make(map[string]wire.Outcome, len(names))
		}
		out[name] = x.run(ctx, wire.Call{ToolID: id, Arguments: jsontext.Value(args)}, false)
	}
	return out
}

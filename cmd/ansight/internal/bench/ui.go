package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/jsonscan"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire/uitree"
)

// uiTapTarget is the demo app's node the UI measurement taps: the notes list's search
// field, which a tap only focuses, so that every round acts on the same screen.
const uiTapTarget = "searchField"

// uiCaptureArgs are the capture arguments of the direct calls: those uiauto captures with
// (the official host's defaults), so that both sides ask the app for the same tree.
var uiCaptureArgs = jsontext.Value(`{"includeBounds":true,"includeComputedStyles":false,"maxDepth":32}`)

// ui measures what `ansight ui tap` costs the host — one UI operation (capture, resolve the
// selector, act) through the host API — against the two calls it stands for made directly
// through the same API: ui.get_visual_tree, then ui.perform_action on that capture's
// snapshotId and the node's id. In a local run the API is the host's in-process backend
// (host/control, what the control socket serves), so the CPU per operation is the host's
// and the app's, with no socket; through --session it is the resident host's, where the
// figures include the socket and the target does not apply.
func (r *run) ui(ctx context.Context, _ session) error {
	if r.api == nil {
		r.report.skip("ui", "no host API to drive the UI through")
		return nil
	}
	op, direct, err := uiTapOps(ctx, r.api, r.apiSession)
	if err != nil {
		if errors.Is(err, errNoTapTarget) {
			r.report.skip("ui", "%v", err)
			return nil
		}
		return err
	}
	n := max(20, r.opts.Calls/50)
	if _, err := r.alternate(ctx, min(n, 50), 1, op, direct); err != nil { // warm up
		return err
	}
	rs, err := r.alternate(ctx, n, 1, op, direct)
	if err != nil {
		return err
	}
	tapped, calls := &rs.ops[0], &rs.ops[1]
	if !r.viaControl {
		r.report.add(Figure{Group: "ui", Name: "CPU per ui tap", Unit: UnitCPUMicros,
			Value: median(tapped.cpu), Baseline: "ui.get_visual_tree + ui.perform_action, direct", BaselineValue: median(calls.cpu),
			Target: r.target(AtMost, 1.2), RatioRange: ratioRange(tapped.cpu, calls.cpu),
			Note: fmt.Sprintf("the host's UI operation (hostapi.Backend.UI: capture, resolve %s, act) against the two calls through the same API; %d of each a round; %s",
				uiTapTarget, n, rs.othersNote())})
	}
	r.report.add(Figure{Group: "ui", Name: "ui tap p50", Unit: UnitMicros,
		Value: micros(tapped.lat.percentile(50)), Baseline: "ui.get_visual_tree + ui.perform_action, direct", BaselineValue: micros(calls.lat.percentile(50)),
		Note: "wall clock"})
	return nil
}

var errNoTapTarget = errors.New("the app has no node " + uiTapTarget + " to tap")

// uiTapOps returns a tap of the demo's search field through b (hostapi.Backend.UI) and the
// two calls it stands for made directly through b.
func uiTapOps(ctx context.Context, b hostapi.Backend, sid string) (op, direct func(context.Context) error, err error) {
	tap := hostapi.UIRequest{Request: uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: uiTapTarget}}}
	// The node the selector resolves to, for the direct calls: found once.
	found, err := b.UI(ctx, sid, hostapi.UIRequest{Request: uiauto.Request{Operation: uiauto.OpFind, Selector: tap.Selector, Exact: true}})
	if err != nil {
		return nil, nil, err
	}
	if !found.Succeeded || found.Result == nil || len(found.Result.Matches) == 0 {
		return nil, nil, fmt.Errorf("%w: %s", errNoTapTarget, found.Message)
	}
	nodeID := found.Result.Matches[0].ID
	op = func(ctx context.Context) error {
		out, err := b.UI(ctx, sid, tap)
		if err == nil && !out.Succeeded {
			err = fmt.Errorf("bench: ui tap %s: %s", uiTapTarget, out.Message)
		}
		return err
	}
	direct = func(ctx context.Context) error {
		tree, err := b.Call(ctx, sid, hostapi.CallRequest{ToolID: uiauto.VisualTreeToolID, Arguments: uiCaptureArgs}, nil)
		if err != nil {
			return err
		}
		if !tree.Success || tree.Result == nil {
			return fmt.Errorf("bench: %s failed: %+v", uiauto.VisualTreeToolID, tree.Error)
		}
		var snapshot [1]string
		jsonscan.TopStrings(tree.Result.Result, []string{"snapshotId"}, snapshot[:], nil)
		args := `{"snapshotId":"` + snapshot[0] + `","nodeId":"` + nodeID + `","action":"tap"}`
		act, err := b.Call(ctx, sid, hostapi.CallRequest{ToolID: uiauto.PerformActionToolID, Arguments: jsontext.Value(args)}, nil)
		if err == nil && !act.Success {
			err = fmt.Errorf("bench: %s failed: %+v", uiauto.PerformActionToolID, act.Error)
		}
		return err
	}
	return op, direct, nil
}

// uiTool is the tool the UI measurement needs the app to offer.
const uiTool = uiauto.PerformActionToolID

package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// CallResult is the answer to a successful tool.call.
type CallResult struct {
	// Payload is the decoded tool.result, evidence included. ASFT descriptors in it carry
	// their final status, artifactPath and receivedBytes.
	Payload wire.Result
	// Raw is the same payload as JSON (decompressed, descriptors rewritten), keeping members
	// that other SDKs add and Payload drops. Payload.Result may share its bytes.
	Raw jsontext.Value
	// Artifacts lists the transfers the result announced, in document order.
	Artifacts []Artifact
}

// BatchResult is the answer to a tool.batch. Item failures are data: see Payload.Results.
type BatchResult struct {
	// Payload is the decoded tool.batch.result, descriptors rewritten as for CallResult.
	Payload wire.BatchResult
	// Raw is the same payload as JSON.
	Raw jsontext.Value
	// Artifacts lists the transfers announced anywhere in the batch, in document order.
	Artifacts []Artifact
	// Refused lists, in order, the indexes of the calls the host refused to send (only
	// with continueOnError; without it a refusal refuses the whole batch). Their items in
	// Payload carry the refusal's error.
	Refused []int
}

// Call invokes one tool. Before sending, the call is checked against the last catalog (one
// is fetched when none is cached): a tool above the session grant, absent from the catalog
// or not executable is refused with a *RefusalError, as are arguments that do not match the
// schema when Options.ValidateArguments is set. The app's tool.error comes back as a
// *wire.Error, an exchange failure as a *TransportError.
//
// Call returns once the response has arrived and every transfer it announced has completed
// or failed. Once the response has arrived, the call has an answer: a transfer that fails
// afterwards (Close, ctx, a stall longer than Options.Timeout, a bad frame) is reported in
// Artifacts and in its descriptor's status, not as an error.
func (c *Client) Call(ctx context.Context, call wire.Call) (*CallResult, error) {
	c.startCall()
	defer c.endCall()
	var one [1]*RefusalError // on the stack: a call allowed costs no refusal list
	calls := []wire.Call{call}
	refused, err := c.authorize(ctx, calls, false, one[:])
	if err == nil && refused[0] != nil {
		err = refused[0]
	}
	if err != nil {
		c.trafficDenied(ctx, wire.TypeCall, calls, err)
		return nil, err
	}
	lim := c.limitFor(ctx, c.catalogs.load(), calls)
	r, err := c.callRoundTrip(ctx, &call, lim)
	if err != nil {
		return nil, err
	}
	res := r.result
	if !res.Payload.Success {
		// Not written by the reference SDKs (failures are tool.error), but a reader must not
		// take it for a success.
		c.transfers.abortEach(r.transfers, errCallFailed)
		msg := res.Payload.Message
		if msg == "" {
			msg = fmt.Sprintf("tool %q reported success:false", res.Payload.ToolID)
		}
		return nil, &wire.Error{Code: wire.CodeExecutionFailed, Message: msg, Details: r.payload}
	}
	res.Raw = r.payload
	if len(r.transfers) > 0 {
		res.Raw, res.Artifacts, err = c.settle(ctx, &r, lim, call.ToolID)
		if err == nil {
			res.Payload = wire.Result{}
			err = wire.Unmarshal(res.Raw, &res.Payload)
		}
		if err != nil {
			return nil, fmt.Errorf("tools: rewrite transfer descriptors: %w", err)
		}
	}
	return res, nil
}

var errCallFailed = errors.New("the call failed")

// Batch sends 1..32 calls as one tool.batch; the app runs them in order and, unless
// continueOnError, stops after the first failure. Every call is checked as in Call before
// anything is sent. Without continueOnError, one refused call refuses the whole batch
// (RefusalError.Index says which) and nothing runs. With continueOnError, a refused call
// becomes that call's failure, as if the app had failed it: the host sends the others
// (docs/protocol/calls.md#batches forbids sending the refused one, not the rest), then
// lists every call in input order; BatchResult.Refused names the calls the host refused. A batch-level tool.error
// comes back as a *wire.Error. Transfers are awaited as in Call.
func (c *Client) Batch(ctx context.Context, continueOnError bool, calls []wire.Call) (*BatchResult, error) {
	if len(calls) == 0 || len(calls) > wire.MaxBatchSize {
		return nil, refuse("", -1, wire.CodeBatchSizeInvalid, "a batch holds 1 to %d calls, not %d", wire.MaxBatchSize, len(calls))
	}
	c.startCall()
	defer c.endCall()
	refused, err := c.authorize(ctx, calls, true, make([]*RefusalError, len(calls)))
	if err == nil && !continueOnError {
		err = firstRefusal(refused)
	}
	if err != nil {
		c.trafficDenied(ctx, wire.TypeBatch, calls, err)
		return nil, err
	}
	send := make([]int, 0, len(calls)) // indexes of the calls sent, in order
	for i, r := range refused {
		if r == nil {
			send = append(send, i)
		} else {
			c.trafficDenied(ctx, wire.TypeBatch, []wire.Call{calls[i]}, r)
		}
	}
	res := &BatchResult{Payload: wire.BatchResult{Success: true, Results: []wire.BatchItem{}}}
	if len(send) > 0 {
		if res, err = c.sendBatch(ctx, continueOnError, calls, send); err != nil {
			return nil, err
		}
	}
	if len(send) < len(calls) {
		res.mergeRefused(calls, send, refused)
	}
	return res, nil
}

// sendBatch sends the calls at the indexes send as one tool.batch.
func (c *Client) sendBatch(ctx context.Context, continueOnError bool, calls []wire.Call, send []int) (*BatchResult, error) {
	b := wire.Batch{ContinueOnError: continueOnError, Calls: make([]jsontext.Value, len(send))}
	for j, i := range send {
		raw, err := wire.Marshal(calls[i])
		if err != nil {
			return nil, fmt.Errorf("tools: encode batch call %d: %w", i, err)
		}
		b.Calls[j] = raw
	}
	sent := make([]wire.Call, len(send))
	for j, i := range send {
		sent[j] = calls[i]
	}
	lim := c.limitFor(ctx, c.catalogs.load(), sent)
	subject := subjectOf(wire.TypeBatch, sent)
	r, err := c.roundTrip(ctx, wire.TypeBatch, b, lim, subject)
	if err != nil {
		return nil, err
	}
	res := &BatchResult{Payload: *r.batch, Raw: r.payload}
	if len(r.transfers) > 0 {
		res.Raw, res.Artifacts, err = c.settle(ctx, &r, lim, subject)
		if err == nil {
			res.Payload = wire.BatchResult{}
			err = wire.Unmarshal(res.Raw, &res.Payload)
		}
		if err != nil {
			return nil, fmt.Errorf("tools: rewrite transfer descriptors: %w", err)
		}
	}
	return res, nil
}

// mergeRefused lists the refused calls among the app's answer to the calls sent (whose
// indexes the app counted from 0 among those sent): every item gets its index in calls,
// and Raw becomes the merged payload.
func (r *BatchResult) mergeRefused(calls []wire.Call, send []int, refused []*RefusalError) {
	app := r.Payload.Results
	out := make([]wire.BatchItem, 0, len(calls))
	next := 0 // the next app item to place
	for i := range calls {
		if rf := refused[i]; rf != nil {
			out = append(out, wire.BatchItem{Index: i, CallID: calls[i].CallID,
				Outcome: wire.Outcome{ToolID: calls[i].ToolID, Error: rf.Err}})
			r.Refused = append(r.Refused, i)
			continue
		}
		for next < len(app) && app[next].Index < len(send) && send[app[next].Index] == i {
			item := app[next]
			item.Index = i
			out = append(out, item)
			next++
		}
	}
	for ; next < len(app); next++ { // items of an app that numbers them its own way
		if j := app[next].Index; j >= 0 && j < len(send) {
			app[next].Index = send[j]
			out = append(out, app[next])
		}
	}
	r.Payload.Results = out
	r.Payload.Requested = len(calls)
	r.Payload.Success = false
	if raw, err := wire.Marshal(&r.Payload); err == nil {
		r.Raw = raw
	}
}

// firstRefusal returns the first refusal in refused, or nil.
func firstRefusal(refused []*RefusalError) error {
	for _, r := range refused {
		if r != nil {
			return r
		}
	}
	return nil
}

// settle waits for r's transfers, within the limit lim of the request about subject, and
// returns the payload with their descriptors rewritten.
func (c *Client) settle(ctx context.Context, r *response, lim Limit, subject string) (jsontext.Value, []Artifact, error) {
	c.waitTransfers(ctx, r.transfers, &lim, subject)
	outcomes := make(map[string]outcome, len(r.transfers))
	artifacts := make([]Artifact, 0, len(r.transfers))
	for _, t := range r.transfers {
		o, a := t.outcome()
		outcomes[t.id] = o
		artifacts = append(artifacts, a)
	}
	raw, err := rewriteDescriptors(r.payload, r.descs, outcomes)
	return raw, artifacts, err
}

// waitTransfers returns when every transfer has ended. A transfer that receives no frame
// for Options.Timeout fails as stalled; the end of ctx fails all that are left, and so
// does the end of the time the limit lim of the request about subject gives them: under a
// caller's limit, what is left of it (ctx's deadline); otherwise their sizes at
// MinTransferRate (transferAllowance). A nil lim sets no bound but stalls and ctx.
func (c *Client) waitTransfers(ctx context.Context, ts []*transfer, lim *Limit, subject string) {
	var over <-chan time.Time
	var bound Limit
	if lim != nil {
		bound = *lim
		if lim.Basis != BasisCaller {
			d := c.transferAllowance(ts)
			allowance := time.NewTimer(d)
			defer allowance.Stop()
			over = allowance.C
			bound = Limit{Timeout: d, Basis: BasisDerived, Reason: "the announced files' size at " + FormatRate(MinTransferRate) + " plus " + FormatDuration(c.opts.Timeout)}
			if d == c.opts.Timeout {
				bound.Basis = BasisDefault
			}
		}
	}
	timer := time.NewTimer(c.opts.Timeout)
	defer timer.Stop()
	for _, t := range ts {
		for waiting := true; waiting; {
			idle := t.idle()
			if idle >= c.opts.Timeout {
				c.transfers.abort(t, fmt.Errorf("%w: no frame for %v", ErrTimeout, c.opts.Timeout))
			}
			timer.Reset(max(c.opts.Timeout-idle, 0))
			select {
			case <-t.done:
				waiting = false
			case <-ctx.Done():
				c.transfers.abortEach(ts, c.ended(ctx, wire.TypeCall, subject, bound))
				return
			case <-over:
				c.transfers.abortEach(ts, &TimeoutError{Op: wire.TypeCall, Subject: subject, Limit: bound, Transfer: true})
				return
			case <-timer.C:
			}
		}
	}
}

// authorize checks the calls the host is asked to send
// (docs/protocol/authorization.md#host-enforcement): tools absent from the last catalog,
// above the grant or not executable are refused, and, when validating, arguments that do
// not match the tool's schema. It returns one entry per call, in refused (len(calls)
// long): nil for a call that may be sent, else its refusal; err is a failure to fetch the
// catalog. It fetches the catalog when
// none is cached, and the definitions it needs for validation. A refusal that a newer
// catalog could lift (a tool not listed, or listed as unavailable) is decided on a fresh
// index: one conditional query, a three-key answer when nothing changed, so the host never
// refuses on a stale availability.
func (c *Client) authorize(ctx context.Context, calls []wire.Call, batch bool, refused []*RefusalError) ([]*RefusalError, error) {
	st := c.catalogs.load()
	fresh := false
	w := want{}
	if c.opts.ValidateArguments {
		w = callWant(calls)
	}
	if st == nil || c.opts.ValidateArguments && len(st.missing(w)) > 0 {
		var err error
		if st, err = c.refresh(ctx, w); err != nil {
			return nil, err
		}
		fresh = true
	}
	for {
		out, err := c.check(st, calls, batch, refused)
		if err != nil || fresh || !slices.ContainsFunc(out, staleRefusal) {
			return out, err
		}
		if st, err = c.refresh(ctx, w); err != nil {
			return nil, err
		}
		fresh = true
	}
}

// staleRefusal reports whether a refusal depends on the app's state, not on the grant.
func staleRefusal(r *RefusalError) bool {
	if r == nil {
		return false
	}
	switch r.Err.Code {
	case wire.CodePolicyNotGranted, wire.CodeCallMissingID, wire.CodeArgumentsSchemaInvalid:
		return false
	}
	return true
}

// check applies authorize's rules to one catalog state, writing the refusals into refused.
func (c *Client) check(st *catalogState, calls []wire.Call, batch bool, refused []*RefusalError) ([]*RefusalError, error) {
	clear(refused) // a second look, on a fresh catalog, starts over
	for i, call := range calls {
		index := -1
		if batch {
			index = i
		}
		if call.ToolID == "" {
			refused[i] = refuse("", index, wire.CodeCallMissingID, "toolId is required")
			continue
		}
		e := st.snap.Tool(call.ToolID)
		if e == nil {
			refused[i] = refuse(call.ToolID, index, wire.CodeNotFound,
				"the app's catalog (revision %s) does not list tool %q", st.revision, call.ToolID)
			continue
		}
		if d := e.Denial; d != nil {
			err := &wire.Error{Code: d.Code, Message: d.Reason}
			if e.Runtime != nil && !e.Runtime.Available {
				err.Retryable = e.Runtime.Retryable
				if len(err.Details) == 0 {
					err.Details, _ = wire.Marshal(e.Runtime)
				}
			}
			refused[i] = &RefusalError{ToolID: call.ToolID, Index: index, Err: err}
			continue
		}
		if c.opts.ValidateArguments {
			r, err := c.validate(st, call, index)
			if err != nil {
				return nil, err
			}
			refused[i] = r
		}
	}
	return refused, nil
}

func callWant(calls []wire.Call) want {
	w := want{ids: make([]string, 0, len(calls))}
	for _, call := range calls {
		w.ids = append(w.ids, call.ToolID)
	}
	return w
}

// validate checks call's arguments against the cached argumentsSchema. Tools without a
// fetched definition or schema, flattened-string tools and schemas this side cannot compile
// are left to the app, which validates again anyway.
func (c *Client) validate(st *catalogState, call wire.Call, index int) (*RefusalError, error) {
	def := st.tools[st.byID[call.ToolID]].def
	if def == nil || len(def.ArgumentsSchema) == 0 || def.ArgumentEncoding == wire.ArgumentEncodingFlattenedString {
		return nil, nil
	}
	compiled, err := schema.Compile(def.ArgumentsSchema)
	if err != nil {
		c.opts.Logger.Debug("tools: cannot compile an argumentsSchema; not validating", "toolId", call.ToolID, "err", err)
		return nil, nil
	}
	args := call.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = jsontext.Value("{}")
	}
	violations := compiled.Validate(args)
	if len(violations) == 0 {
		return nil, nil
	}
	details, err := wire.Marshal(struct {
		Valid  bool               `json:"valid"`
		Errors []schema.Violation `json:"errors"`
	}{false, violations})
	if err != nil {
		return nil, fmt.Errorf("tools: encode schema violations: %w", err)
	}
	return &RefusalError{ToolID: call.ToolID, Index: index, Err: &wire.Error{
		Code:    wire.CodeArgumentsSchemaInvalid,
		Message: fmt.Sprintf("the arguments do not match the argumentsSchema of %q: %s %s", call.ToolID, violations[0].Path, violations[0].Message),
		Details: details,
	}}, nil
}

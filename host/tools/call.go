package tools

import (
	"context"
	"errors"
	"fmt"
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
	// that other SDKs add and Payload drops.
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
	if err := c.authorize(ctx, []wire.Call{call}, false); err != nil {
		c.trafficDenied(wire.TypeCall, []wire.Call{call}, err)
		return nil, err
	}
	r, err := c.roundTrip(ctx, wire.TypeCall, call)
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
		res.Raw, res.Artifacts, err = c.settle(ctx, &r)
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
// anything is sent; one refused call refuses the whole batch (RefusalError.Index says
// which). A batch-level tool.error comes back as a *wire.Error. Transfers are awaited as in
// Call.
func (c *Client) Batch(ctx context.Context, continueOnError bool, calls []wire.Call) (*BatchResult, error) {
	if len(calls) == 0 || len(calls) > wire.MaxBatchSize {
		return nil, refuse("", -1, wire.CodeBatchSizeInvalid, "a batch holds 1 to %d calls, not %d", wire.MaxBatchSize, len(calls))
	}
	if err := c.authorize(ctx, calls, true); err != nil {
		c.trafficDenied(wire.TypeBatch, calls, err)
		return nil, err
	}
	b := wire.Batch{ContinueOnError: continueOnError, Calls: make([]jsontext.Value, len(calls))}
	for i, call := range calls {
		raw, err := wire.Marshal(call)
		if err != nil {
			return nil, fmt.Errorf("tools: encode batch call %d: %w", i, err)
		}
		b.Calls[i] = raw
	}
	r, err := c.roundTrip(ctx, wire.TypeBatch, b)
	if err != nil {
		return nil, err
	}
	res := &BatchResult{Payload: *r.batch, Raw: r.payload}
	if len(r.transfers) > 0 {
		res.Raw, res.Artifacts, err = c.settle(ctx, &r)
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

// settle waits for r's transfers and returns the payload with their descriptors rewritten.
func (c *Client) settle(ctx context.Context, r *response) (jsontext.Value, []Artifact, error) {
	c.waitTransfers(ctx, r.transfers)
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
// for Options.Timeout fails as stalled; the end of ctx fails all that are left.
func (c *Client) waitTransfers(ctx context.Context, ts []*transfer) {
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
				c.transfers.abortEach(ts, context.Cause(ctx))
				return
			case <-timer.C:
			}
		}
	}
}

// authorize refuses calls the host must not send (docs/protocol/authorization.md#host-enforcement): tools absent from the last
// catalog, above the grant or not executable, and, when validating, arguments that do not
// match the tool's schema. It fetches the catalog when none is cached, and the definitions
// it needs for validation. A refusal that a newer catalog could lift (a tool not listed, or
// listed as unavailable) is decided on a fresh index: one conditional query, a three-key
// answer when nothing changed, so the host never refuses on a stale availability.
func (c *Client) authorize(ctx context.Context, calls []wire.Call, batch bool) error {
	st := c.catalogs.load()
	fresh := false
	if st == nil || c.opts.ValidateArguments && len(st.missing(callWant(calls))) > 0 {
		w := want{}
		if c.opts.ValidateArguments {
			w = callWant(calls)
		}
		var err error
		if st, err = c.refresh(ctx, w); err != nil {
			return err
		}
		fresh = true
	}
	for {
		err := c.check(st, calls, batch)
		if err == nil || fresh || !staleRefusal(err) {
			return err
		}
		w := want{}
		if c.opts.ValidateArguments {
			w = callWant(calls)
		}
		if st, err = c.refresh(ctx, w); err != nil {
			return err
		}
		fresh = true
	}
}

// staleRefusal reports whether a refusal depends on the app's state, not on the grant.
func staleRefusal(err error) bool {
	var r *RefusalError
	if !errors.As(err, &r) {
		return false
	}
	switch r.Err.Code {
	case wire.CodePolicyNotGranted, wire.CodeCallMissingID, wire.CodeArgumentsSchemaInvalid:
		return false
	}
	return true
}

// check applies authorize's rules to one catalog state.
func (c *Client) check(st *catalogState, calls []wire.Call, batch bool) error {
	for i, call := range calls {
		index := -1
		if batch {
			index = i
		}
		if call.ToolID == "" {
			return refuse("", index, wire.CodeCallMissingID, "toolId is required")
		}
		e := st.snap.Tool(call.ToolID)
		if e == nil {
			return refuse(call.ToolID, index, wire.CodeNotFound,
				"the app's catalog (revision %s) does not list tool %q", st.revision, call.ToolID)
		}
		if d := e.Denial; d != nil {
			err := &wire.Error{Code: d.Code, Message: d.Reason}
			if e.Runtime != nil && !e.Runtime.Available {
				err.Retryable = e.Runtime.Retryable
				if len(err.Details) == 0 {
					err.Details, _ = wire.Marshal(e.Runtime)
				}
			}
			return &RefusalError{ToolID: call.ToolID, Index: index, Err: err}
		}
		if c.opts.ValidateArguments {
			if err := c.validate(st, call, index); err != nil {
				return err
			}
		}
	}
	return nil
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
func (c *Client) validate(st *catalogState, call wire.Call, index int) error {
	def := st.tools[st.byID[call.ToolID]].def
	if def == nil || len(def.ArgumentsSchema) == 0 || def.ArgumentEncoding == wire.ArgumentEncodingFlattenedString {
		return nil
	}
	compiled, err := schema.Compile(def.ArgumentsSchema)
	if err != nil {
		c.opts.Logger.Debug("tools: cannot compile an argumentsSchema; not validating", "toolId", call.ToolID, "err", err)
		return nil
	}
	args := call.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = jsontext.Value("{}")
	}
	violations := compiled.Validate(args)
	if len(violations) == 0 {
		return nil
	}
	details, err := wire.Marshal(struct {
		Valid  bool               `json:"valid"`
		Errors []schema.Violation `json:"errors"`
	}{false, violations})
	if err != nil {
		return fmt.Errorf("tools: encode schema violations: %w", err)
	}
	return &RefusalError{ToolID: call.ToolID, Index: index, Err: &wire.Error{
		Code:    wire.CodeArgumentsSchemaInvalid,
		Message: fmt.Sprintf("the arguments do not match the argumentsSchema of %q: %s %s", call.ToolID, violations[0].Path, violations[0].Message),
		Details: details,
	}}
}

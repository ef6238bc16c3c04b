package app

import (
	"bytes"
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// batch runs a tool.batch payload (docs/protocol/calls.md#batches). Structural problems are a *wire.Error for the
// whole request; otherwise the calls run sequentially, each through the whole call path,
// and the result lists them in input order up to the first failure unless
// continueOnError is set.
func (x *exchange) batch(ctx context.Context, payload jsontext.Value) (*wire.BatchResult, *wire.Error) {
	if payload.Kind() != '{' {
		return nil, &wire.Error{Code: wire.CodeBatchPayloadInvalid, Message: "The tool.batch payload must be a JSON object."}
	}
	var b struct {
		ContinueOnError bool           `json:"continueOnError"`
		Calls           jsontext.Value `json:"calls"`
	}
	if err := wire.Unmarshal(payload, &b); err != nil {
		return nil, &wire.Error{Code: wire.CodeBatchPayloadInvalid, Message: "The tool.batch payload is invalid: " + err.Error()}
	}
	if b.Calls.Kind() != '[' {
		return nil, &wire.Error{Code: wire.CodeBatchPayloadInvalid, Message: "The tool.batch payload must hold a calls array."}
	}
	calls, n, err := batchCalls(b.Calls)
	if err != nil {
		return nil, &wire.Error{Code: wire.CodeBatchPayloadInvalid, Message: "The tool.batch calls are invalid: " + err.Error()}
	}
	if n == 0 || n > wire.MaxBatchSize {
		return nil, &wire.Error{Code: wire.CodeBatchSizeInvalid, Message: fmt.Sprintf("A batch holds 1 to %d calls, not %d.", wire.MaxBatchSize, n)}
	}

	res := &wire.BatchResult{Success: true, Requested: len(calls), Results: make([]wire.BatchItem, 0, len(calls))}
	for i, raw := range calls {
		if ctx.Err() != nil {
			break // the connection is gone; nobody will read the result
		}
		var item wire.BatchItem
		if raw.Kind() != '{' {
			item = wire.BatchItem{Index: i, Outcome: wire.Outcome{Error: &wire.Error{Code: wire.CodeBatchCallInvalid, Message: "Each batch call must be a JSON object."}}}
		} else {
			out, callID := x.call(ctx, raw, true)
			item = wire.BatchItem{Outcome: out, Index: i, CallID: callID}
			res.Completed++
		}
		res.Results = append(res.Results, item)
		if !item.Success {
			res.Success = false
			if !b.ContinueOnError {
				break
			}
		}
	}
	res.StoppedEarly = len(res.Results) < len(calls)
	return res, nil
}

// batchCalls splits a calls array (already checked to be valid JSON) into its items and
// counts them. Beyond MaxBatchSize it only counts: a longer list is refused whatever its
// length, so it is never held item by item.
func batchCalls(array jsontext.Value) (calls []jsontext.Value, n int, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(array))
	if _, err := dec.ReadToken(); err != nil {
		return nil, 0, err
	}
	for ; dec.PeekKind() != ']'; n++ {
		if n >= wire.MaxBatchSize {
			if err := dec.SkipValue(); err != nil {
				return nil, 0, err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, 0, err
		}
		calls = append(calls, v.Clone()) // v is void after the next read
	}
	return calls, n, nil
}

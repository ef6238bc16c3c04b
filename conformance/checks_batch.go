package conformance

import (
	"fmt"
	"strings"

	"github.com/ansight-go/ansight/wire"
)

var batchChecks = []check{
	{"batch.size_zero", "a batch of 0 calls answers tool.error tool_batch_size_invalid (docs/protocol/calls.md#batches)", checkBatchSizeZero},
	{"batch.size_over", "a batch of 33 calls answers tool.error tool_batch_size_invalid and runs nothing (docs/protocol/calls.md#batches)", checkBatchSizeOver},
	{"batch.size_one", "a batch of 1 call answers tool.batch.result {success, completed, requested, stoppedEarly, results[{…, index:0, callId}]} (docs/protocol/calls.md#batches)", checkBatchSizeOne},
	{"batch.size_max", "a batch of 32 calls runs them all, results in input order with index and callId (docs/protocol/calls.md#batches)", checkBatchSizeMax},
	{"batch.payload_invalid", "a batch payload that is not an object, or calls that is absent or not an array, answers tool_batch_payload_invalid (docs/protocol/calls.md#batches)", checkBatchPayloadInvalid},
	{"batch.stop_on_failure", "without continueOnError the batch stops after the first failed call; later calls are neither run nor listed (docs/protocol/calls.md#batches)", checkBatchStop},
	{"batch.continue_on_error", "with continueOnError every call runs and is listed (docs/protocol/calls.md#batches)", checkBatchContinue},
	{"batch.call_invalid", "a non-object call item yields {index, success:false, error:{code:tool_batch_call_invalid}} and counts as a failure (docs/protocol/calls.md#batches)", checkBatchCallInvalid},
}

// batch sends a batch of raw call items and returns the batch result payload.
func (c *cx) batch(continueOnError bool, items []string) map[string]any {
	payload := `{"calls":[` + strings.Join(items, ",") + `]}`
	if continueOnError {
		payload = `{"continueOnError":true,"calls":[` + strings.Join(items, ",") + `]}`
	}
	return c.want(c.exchange(wire.TypeBatch, payload), wire.TypeBatchResult)
}

// item builds one call item of a batch.
func item(call wire.Call, callID string) string {
	call.CallID = callID
	return callPayload(call)
}

// batchShape checks the members of a batch result against what was requested and the
// items expected: for each listed item, whether it succeeds.
func (c *cx) batchShape(o map[string]any, requested int, want []bool, callIDs []string) {
	var list []string
	bad := func(format string, args ...any) { list = append(list, fmt.Sprintf(format, args...)) }
	results, ok := o["results"].([]any)
	if !ok {
		c.expectf("results: an array", "results is %s", describe(o["results"]))
	}
	allOK := true
	for _, w := range want {
		allOK = allOK && w
	}
	if o["success"] != allOK {
		bad("success is %s, want %v", describe(o["success"]), allOK)
	}
	if o["requested"] != float64(requested) {
		bad("requested is %s, want %d", describe(o["requested"]), requested)
	}
	if o["stoppedEarly"] != (len(want) < requested) {
		bad("stoppedEarly is %s, want %v", describe(o["stoppedEarly"]), len(want) < requested)
	}
	if n, ok := o["completed"].(float64); !ok || int(n) > len(want) || int(n) < count(want, true) {
		bad("completed is %s for %d listed items, %d of them successful", describe(o["completed"]), len(want), count(want, true))
	}
	if len(results) != len(want) {
		bad("%d results listed, want %d", len(results), len(want))
	}
	for i, x := range results {
		at := fmt.Sprintf("results[%d]", i)
		list = append(list, outcomeProblems(x, at)...)
		r, _ := x.(map[string]any)
		if r["index"] != float64(i) {
			bad("%s.index is %s, want %d", at, describe(r["index"]), i)
		}
		if i < len(want) && r["success"] != want[i] {
			bad("%s.success is %s, want %v (%v)", at, describe(r["success"]), want[i], r["error"])
		}
		if i < len(callIDs) && callIDs[i] != "" && r["callId"] != callIDs[i] {
			bad("%s.callId is %s, want %q", at, describe(r["callId"]), callIDs[i])
		}
		if i < len(callIDs) && callIDs[i] == "" && r["callId"] != nil {
			bad("%s.callId is %s, but the call had none", at, describe(r["callId"]))
		}
	}
	c.problems("a batch result (docs/protocol/calls.md#batches)", list)
}

func count(list []bool, v bool) int {
	n := 0
	for _, x := range list {
		if x == v {
			n++
		}
	}
	return n
}

func checkBatchSizeZero(c *cx) {
	c.wantError(c.exchange(wire.TypeBatch, `{"calls":[]}`), wire.CodeBatchSizeInvalid)
}

func checkBatchSizeOver(c *cx) {
	call := c.readCall()
	items := make([]string, wire.MaxBatchSize+1)
	for i := range items {
		items[i] = item(call, "")
	}
	c.wantError(c.exchange(wire.TypeBatch, `{"calls":[`+strings.Join(items, ",")+`]}`), wire.CodeBatchSizeInvalid)
}

func checkBatchSizeOne(c *cx) {
	call := c.readCall()
	o := c.batch(false, []string{item(call, "conform-call-0")})
	c.batchShape(o, 1, []bool{true}, []string{"conform-call-0"})
}

func checkBatchSizeMax(c *cx) {
	call := c.readCall()
	items := make([]string, wire.MaxBatchSize)
	ids := make([]string, wire.MaxBatchSize)
	want := make([]bool, wire.MaxBatchSize)
	for i := range items {
		if i%4 != 3 { // some items without callId
			ids[i] = fmt.Sprintf("conform-call-%d", i)
		}
		items[i], want[i] = item(call, ids[i]), true
	}
	c.batchShape(c.batch(false, items), wire.MaxBatchSize, want, ids)
}

func checkBatchPayloadInvalid(c *cx) {
	for _, payload := range []string{`[{"toolId":"x"}]`, `"calls"`, `{}`, `{"calls":{"toolId":"x"}}`, `{"calls":"x"}`} {
		c.wantError(c.exchange(wire.TypeBatch, payload), wire.CodeBatchPayloadInvalid)
	}
}

// failingItem is a call item that fails before it runs.
func failingItem(callID string) string {
	return `{"callId":` + js(callID) + `,"toolId":"conformance.no_such_tool","arguments":{}}`
}

func checkBatchStop(c *cx) {
	call := c.readCall()
	o := c.batch(false, []string{item(call, "a"), failingItem("b"), item(call, "c")})
	c.batchShape(o, 3, []bool{true, false}, []string{"a", "b"})
	if e := errorOf(o, 1); e["code"] != string(wire.CodeNotFound) {
		c.expectf("results[1].error.code tool_not_found", "results[1].error is %v", e)
	}
}

func checkBatchContinue(c *cx) {
	call := c.readCall()
	o := c.batch(true, []string{item(call, "a"), failingItem("b"), item(call, "c")})
	c.batchShape(o, 3, []bool{true, false, true}, []string{"a", "b", "c"})
}

func checkBatchCallInvalid(c *cx) {
	call := c.readCall()
	o := c.batch(true, []string{item(call, "a"), `5`, item(call, "c")})
	c.batchShape(o, 3, []bool{true, false, true}, []string{"a", "", "c"})
	if e := errorOf(o, 1); e["code"] != string(wire.CodeBatchCallInvalid) {
		c.expectf("results[1].error.code tool_batch_call_invalid", "results[1].error is %v", e)
	}
	o = c.batch(false, []string{item(call, "a"), `"not a call"`, item(call, "c")})
	c.batchShape(o, 3, []bool{true, false}, []string{"a", ""})
}

// errorOf returns the error object of result i of a batch result.
func errorOf(o map[string]any, i int) map[string]any {
	results, _ := o["results"].([]any)
	if i >= len(results) {
		return nil
	}
	r, _ := results[i].(map[string]any)
	e, _ := r["error"].(map[string]any)
	return e
}

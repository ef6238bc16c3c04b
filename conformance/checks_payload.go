package conformance

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

var encodingChecks = []check{
	{"encoding.large_response", "a response payload of at least 32768 bytes is sent as a gzip-base64-json wrapper with exact byte counts, strictly smaller than the original (docs/protocol/messages.md#encoding-a-payload)", checkEncodingLarge},
	{"encoding.small_response", "payloads under 32768 bytes (catalogs, results, errors, short forms) are never compressed (docs/protocol/messages.md#encoding-a-payload)", checkEncodingSmall},
}

var asftChecks = []check{
	{"asft.transfer", "an artifact result announces {deliveryMode, wireProtocol, transferId, sizeBytes, fileName, mimeType}; frames follow the response: sequence from 0, contiguous offsets, a complete frame at offset = sizeBytes (docs/protocol/artifacts.md#descriptor)", checkASFTTransfer},
	{"interop.official_host_ui_defaults", "the standard UI tools take the arguments the official host adds to its calls: ui.get_visual_tree {maxDepth:32, includeComputedStyles:false}; ui.get_screenshot {format:jpeg, quality:80, maxWidth:1440, afterScreenUpdates:false} (its app call default; 1280 for the screenshots it takes as evidence), answered with a real JPEG whose descriptor is the result object itself, the only place the official host registers a transfer", checkOfficialHostUIDefaults},
}

var malformedChecks = []check{
	{"malformed.invalid_json", "a tool request that is not valid JSON gets tool_protocol_invalid_request and the app keeps working (docs/protocol/messages.md#invalid-requests)", malformed(`{"type":"tool.query","id":%q,"payload":{"detail":`, true)},
	{"malformed.blank_id", "a tool request with a blank id gets tool_protocol_invalid_request without replyTo and the app keeps working (docs/protocol/messages.md#invalid-requests)", malformed(`{"type":"tool.call","id":"   ","payload":{"toolId":"conformance.no_such_tool"}}`, false)},
	{"malformed.missing_id", "a tool request without id gets tool_protocol_invalid_request without replyTo and the app keeps working (docs/protocol/messages.md#invalid-requests)", malformed(`{"type":"tool.query","payload":{}}`, false)},
	{"malformed.id_not_string", "a tool request whose id is not a string gets tool_protocol_invalid_request without replyTo and the app keeps working (docs/protocol/messages.md#invalid-requests)", malformed(`{"type":"tool.batch","id":7,"payload":{"calls":[]}}`, false)},
	{"malformed.duplicate_keys", "a tool request with a duplicate key gets tool_protocol_invalid_request and the app keeps working (docs/protocol/messages.md#strict-decoding)", malformed(`{"type":"tool.query","id":%q,"payload":{},"payload":{"detail":"index"}}`, true)},
	{"malformed.case_variant_key", "a tool request with a key that differs from a field name only by case gets tool_protocol_invalid_request (docs/protocol/messages.md#strict-decoding)", malformed(`{"type":"tool.query","id":%q,"Payload":{"detail":"index"},"payload":{}}`, true)},
	{"malformed.bad_sent_at", "a tool request whose sentAt is not RFC 3339 gets tool_protocol_invalid_request (docs/protocol/messages.md#invalid-requests)", malformed(`{"type":"tool.query","id":%q,"sentAt":"yesterday","payload":{}}`, true)},
	{"malformed.deep_nesting", "a tool request nested deeper than 256 levels gets tool_protocol_invalid_request and the app keeps working (docs/protocol/messages.md#invalid-requests)", malformed(`{"type":"tool.call","id":%q,"payload":{"toolId":"x","arguments":{"a":`+strings.Repeat("[", 300)+strings.Repeat("]", 300)+`}}}`, true)},
}

func checkEncodingLarge(c *cx) {
	var p *response
	if call := c.r.opts.Scenario.LargeResult; call != nil {
		p = c.exchange(wire.TypeCall, callPayload(*call))
		c.want(p, wire.TypeResult)
	} else {
		p = c.exchange(wire.TypeQuery, `{}`)
		c.want(p, wire.TypeCatalog)
		if len(p.body) < wire.CompressionThreshold {
			c.skipf("no large response to look at: the full catalog has %d bytes and Options.Scenario.LargeResult is not set", len(p.body))
		}
	}
	if n := len(compact(p.body)); n < wire.CompressionThreshold {
		c.skipf("the large result has only %d bytes", n)
	}
	if !p.wrapped {
		if probs := plainProblems(p.env.Payload); len(probs) > 0 {
			c.problems("a gzip-base64-json wrapper (docs/protocol/messages.md#payload-encoding)", probs)
		}
		c.notef("the payload does not shrink under gzip-base64-json, so it was rightly sent as is")
		return
	}
	c.problems("a wrapper {$ansightEncoding, contentType, originalByteCount, compressedByteCount, data} (docs/protocol/messages.md#payload-encoding)", wrapperProblems(p.env.Payload))
}

func checkEncodingSmall(c *cx) {
	for _, k := range []struct{ typ, payload string }{
		{wire.TypeQuery, `{"detail":"index","limit":1}`},
		{wire.TypeQuery, `{"detail":"index","query":"zzconformancezz"}`},
		{wire.TypeCall, `{"toolId":"conformance.no_such_tool"}`},
		{wire.TypeBatch, `{"calls":[]}`},
	} {
		p := c.exchange(k.typ, k.payload)
		if p.wrapped {
			c.problems("a plain payload (docs/protocol/messages.md#encoding-a-payload: only payloads of at least 32768 bytes are compressed)", wrapperProblems(p.env.Payload))
			c.expectf("a plain payload", "a small payload was compressed")
		}
	}
}

var transferIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func checkASFTTransfer(c *cx) {
	call := c.r.opts.Scenario.Artifact
	if call == nil {
		t := c.catalog().byID[wire.ScreenshotToolID]
		if t == nil || !t.executable || t.policy != wire.PolicyRead || len(required(t.args)) > 0 {
			c.skipf("the app has no artifact tool: no executable read %s, and Options.Scenario.Artifact is not set", wire.ScreenshotToolID)
		}
		call = &wire.Call{ToolID: t.id, Arguments: jsontext.Value(`{}`)}
	}
	p := c.exchange(wire.TypeCall, callPayload(*call))
	o := c.want(p, wire.TypeResult)
	ds := descriptors(o["result"], nil)
	if len(ds) == 0 {
		c.expectf("a transfer descriptor {deliveryMode:\"websocket_binary\", wireProtocol:\"ansight.file-transfer.v1\", …} in the result", "the result announces no transfer")
	}
	for _, d := range ds {
		id, _ := d["transferId"].(string)
		if !transferIDPattern.MatchString(id) {
			c.expectf("transferId: 32 lower-case hex digits", "transferId is %s", describe(d["transferId"]))
		}
		size, ok := d["sizeBytes"].(float64)
		if !ok || size < 0 || size != float64(int64(size)) {
			c.expectf("sizeBytes: a non-negative integer", "sizeBytes is %s", describe(d["sizeBytes"]))
		}
		for _, k := range []string{"fileName", "mimeType"} {
			if s, _ := d[k].(string); s == "" {
				c.expectf(k+": a non-empty string", "%s is %s", k, describe(d[k]))
			}
		}
		if err := c.r.awaitTransfer(c.ctx, id); err != nil {
			c.failf("transfer %s did not end: %v", id, err)
		}
		t := c.r.transfers[id]
		c.problems("frames in order after the response, complete at sizeBytes (docs/protocol/artifacts.md#sending)", t.problems)
		if t.failed != "" {
			c.failf("the app aborted transfer %s with an error frame: %s", id, t.failed)
		}
	}
}

func checkOfficialHostUIDefaults(c *cx) {
	v := c.catalog()
	ran := false
	if t := v.byID[wire.VisualTreeToolID]; t != nil && t.executable && t.policy == wire.PolicyRead {
		ran = true
		c.callOK(wire.Call{ToolID: t.id, Arguments: jsontext.Value(`{"maxDepth":32,"includeComputedStyles":false}`)})
	}
	if t := v.byID[wire.ScreenshotToolID]; t != nil && t.executable && t.policy == wire.PolicyRead {
		ran = true
		// `ansight app call` adds maxWidth 1440; the host's own evidence screenshots ask 1280.
		for _, width := range []int{1440, 1280} {
			checkJPEG(c, t.id, fmt.Sprintf(`{"format":"jpeg","quality":80,"maxWidth":%d,"afterScreenUpdates":false}`, width))
		}
	}
	if !ran {
		c.skipf("the app publishes neither %s nor %s as an executable read tool", wire.VisualTreeToolID, wire.ScreenshotToolID)
	}
}

// checkJPEG calls a screenshot tool with args and checks the answer the official host needs:
// the result object is the descriptor, the bytes a JPEG.
func checkJPEG(c *cx, tool, args string) {
	o := c.callOK(wire.Call{ToolID: tool, Arguments: jsontext.Value(args)})
	res, _ := o["result"].(map[string]any)
	id, _ := res["transferId"].(string)
	if res["deliveryMode"] != wire.DeliveryModeWebSocketBinary || res["wireProtocol"] != wire.FileTransferProtocol || id == "" {
		c.expectf("the result object itself is the transfer descriptor", "result is %s", describe(o["result"]))
	}
	if res["mimeType"] != "image/jpeg" {
		c.expectf(`mimeType "image/jpeg" for format jpeg`, "mimeType is %s", describe(res["mimeType"]))
	}
	if id != "" {
		if err := c.r.awaitTransfer(c.ctx, id); err != nil {
			c.failf("transfer %s did not end: %v", id, err)
		}
		if tr := c.r.transfers[id]; tr != nil && !bytes.HasPrefix(tr.head, []byte{0xFF, 0xD8, 0xFF}) {
			c.expectf("JPEG bytes (FF D8 FF …)", "the image starts with % x", tr.head)
		}
	}
}

// malformed returns a check that sends format (with the request id in place of %q when
// withID) and expects tool_protocol_invalid_request, then a working app.
func malformed(format string, withID bool) func(c *cx) {
	return func(c *cx) {
		id := c.r.newRequestID()
		raw := []byte(format)
		if withID {
			raw = fmt.Appendf(nil, format, id)
		}
		p := c.roundTrip(id, "", "", raw, true)
		c.wantError(p, wire.CodeProtocolInvalidRequest)
		switch {
		case p.env.ReplyTo != "" && (!withID || p.env.ReplyTo != id):
			c.expectf("no replyTo when the request's id cannot be read, else the request's id", "replyTo is %q", p.env.ReplyTo)
		case !strings.HasPrefix(p.env.ID, "tool.error.") && p.env.ReplyTo == "":
			c.notef("the error's id is %q; docs/protocol/messages.md#invalid-requests suggests tool.error.<random hex>", p.env.ID)
		}
		c.probe("a malformed request")
	}
}

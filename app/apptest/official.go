package apptest

import (
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The tools whose transfers the official host receives.
var officialTransferTools = map[string]bool{"ui.get_screenshot": true, "artifacts.request": true, "files.begin_binary_download": true}

// OfficialHostTransfers returns the ids of the ASFT transfers the official host registers
// from a response payload (a tool.result or tool.batch.result, inflated), by its rule
// (ansight-cli BinaryToolArtifactTransferManager): it walks the payload's objects and
// arrays, each object's tool id being its own "toolId" member or else its parent object's
// (an array item inherits none), and registers an object's "result" member when that is
// itself a transfer descriptor (deliveryMode websocket_binary, wireProtocol
// ansight.file-transfer.v1, a transferId) of ui.get_screenshot, artifacts.request or
// files.begin_binary_download — the first and last also need an integer sizeBytes, and
// artifacts.request a size that is not negative. It does not look inside a result: a
// descriptor nested in one is never registered, and the frames of a transfer the official
// host did not register are dropped.
func OfficialHostTransfers(payload jsontext.Value) []string {
	var v any
	if json.Unmarshal(payload, &v) != nil {
		return nil
	}
	var ids []string
	collectTransfers(v, "", &ids)
	return ids
}

func collectTransfers(v any, inherited string, ids *[]string) {
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			collectTransfers(item, "", ids)
		}
	case map[string]any:
		tool := inherited
		if s, ok := v["toolId"].(string); ok {
			tool = s
		}
		if r, ok := v["result"].(map[string]any); ok && officialTransferTools[tool] {
			if id, ok := officialDescriptor(tool, r); ok {
				*ids = append(*ids, id)
			}
		}
		for name, member := range v {
			if name != "result" {
				collectTransfers(member, tool, ids)
			}
		}
	}
}

// officialDescriptor reports whether result is a descriptor the official host accepts for
// tool, and its transfer id.
func officialDescriptor(tool string, result map[string]any) (string, bool) {
	if result["deliveryMode"] != "websocket_binary" || result["wireProtocol"] != "ansight.file-transfer.v1" {
		return "", false
	}
	id, _ := result["transferId"].(string)
	if id == "" {
		return "", false
	}
	size, sized := integer(result["sizeBytes"])
	if tool == "artifacts.request" {
		if art, ok := result["artifact"].(map[string]any); ok {
			if n, ok := integer(art["sizeBytes"]); ok {
				size, sized = n, true
			}
		}
		return id, !sized || size >= 0
	}
	return id, sized && (tool != "files.begin_binary_download" || size >= 0)
}

// integer reads a JSON number or numeric string as the official host's Int64 reader does.
func integer(v any) (int64, bool) {
	switch v := v.(type) {
	case float64:
		return int64(v), v == float64(int64(v))
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

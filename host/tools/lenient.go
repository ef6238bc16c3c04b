package tools

import (
	"bytes"
	"log/slog"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// Responses other SDKs write that the strict types refuse, and that the official host
// accepts: these readers run only after the strict decoder has refused a payload (or found
// a tool.error without code), so the common path pays nothing for them. They relax only
// what a peer is known to send; anything else keeps the strict decoder's error.

// lenientCatalog reads a catalog whose entries the strict decoder refused, skipping each
// entry whose policy is not read, write or critical (or delete) with a logged warning: an
// app that adds a policy level must not lose the host every other tool. The returned
// payload is the catalog re-encoded without the skipped entries, so that positions in it
// match the decoded tools. ok is false when anything else is wrong.
func lenientCatalog(payload []byte, log *slog.Logger) (cat *wire.Catalog, kept []byte, ok bool) {
	var c struct {
		wire.Catalog
		Tools []jsontext.Value `json:"tools,omitzero"`
	}
	if wire.Unmarshal(payload, &c) != nil {
		return nil, nil, false
	}
	cat = &c.Catalog
	cat.Tools = make([]wire.ToolEntry, 0, len(c.Tools))
	raws := c.Tools[:0:0]
	for _, raw := range c.Tools {
		var e wire.ToolEntry
		if err := wire.Unmarshal(raw, &e); err != nil {
			var p struct {
				ID     string `json:"id"`
				Policy string `json:"policy"`
			}
			if wire.Unmarshal(raw, &p) != nil {
				return nil, nil, false
			}
			if _, perr := wire.ParsePolicy(p.Policy); perr == nil {
				return nil, nil, false // not the policy: keep the strict error
			}
			log.Warn("tools: skipped a catalog entry with an unknown policy", "tool", p.ID, "policy", p.Policy)
			continue
		}
		cat.Tools = append(cat.Tools, e)
		raws = append(raws, raw)
	}
	c.Tools = raws
	kept, err := wire.Marshal(c)
	if err != nil {
		return nil, nil, false
	}
	return cat, kept, true
}

// lenientBatchResult reads a batch result whose items carry a callId that is not a
// string: the official SDKs echo the caller's callId as any JSON value, and some write
// numbers. Numbers and booleans become their JSON text, null "". ok is false when anything
// else is wrong.
func lenientBatchResult(payload []byte) (*wire.BatchResult, bool) {
	var b struct {
		wire.BatchResult
		Results []struct {
			wire.Outcome
			Index  int            `json:"index"`
			CallID jsontext.Value `json:"callId"`
		} `json:"results"`
	}
	if wire.Unmarshal(payload, &b) != nil {
		return nil, false
	}
	out := b.BatchResult
	out.Results = make([]wire.BatchItem, len(b.Results))
	for i, it := range b.Results {
		item := wire.BatchItem{Outcome: it.Outcome, Index: it.Index}
		switch it.CallID.Kind() {
		case 0, 'n':
		case '"':
			if wire.Unmarshal(it.CallID, &item.CallID) != nil {
				return nil, false
			}
		case '0', 't', 'f':
			item.CallID = string(it.CallID)
		default:
			return nil, false
		}
		out.Results[i] = item
	}
	return &out, true
}

// errorCodeName is what an older Kotlin runtime writes instead of "code" in a tool.error
// and in the error of a batch item.
var errorCodeName = []byte(`"errorCode"`)

// legacyErrorCode returns the errorCode member of an error object, or "".
func legacyErrorCode(obj []byte) wire.Code {
	if !bytes.Contains(obj, errorCodeName) {
		return ""
	}
	var e struct {
		ErrorCode wire.Code `json:"errorCode"`
	}
	if wire.Unmarshal(obj, &e) != nil {
		return ""
	}
	return e.ErrorCode
}

// fillLegacyItemCodes gives the failed items of b whose error has no code the errorCode
// the app wrote instead, reading payload (b's source) again only when one needs it.
func fillLegacyItemCodes(b *wire.BatchResult, payload []byte) {
	missing := false
	for _, it := range b.Results {
		if it.Error != nil && it.Error.Code == "" {
			missing = true
		}
	}
	if !missing || !bytes.Contains(payload, errorCodeName) {
		return
	}
	var raw struct {
		Results []struct {
			Error jsontext.Value `json:"error"`
		} `json:"results"`
	}
	if wire.Unmarshal(payload, &raw) != nil || len(raw.Results) != len(b.Results) {
		return
	}
	for i := range b.Results {
		if e := b.Results[i].Error; e != nil && e.Code == "" {
			e.Code = legacyErrorCode(raw.Results[i].Error)
		}
	}
}

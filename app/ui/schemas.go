package ui

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// The published JSON Schemas of the five tools, written by hand so that every bound,
// default and enum is explicit. They use the protocol's closed-object form: an object
// schema without additionalProperties admits no other properties.
//
// The source enum names the toolkit's single source, so schemas are built per Register
// call.

// Fragments shared by several schemas.
const (
	boundsSchema = `{"type":"object","description":"Frame in screen points, origin top-left.","properties":{` +
		`"x":{"type":"number"},"y":{"type":"number"},` +
		`"width":{"type":"number","minimum":0},"height":{"type":"number","minimum":0}},` +
		`"required":["x","y","width","height"]}`

	referenceSchema = `{"type":"object","description":"Snapshot-scoped node reference, as returned in ui.query_nodes matches. Valid only while its snapshot is the latest capture of its source.","properties":{` +
		`"source":{"type":"string","minLength":1,"maxLength":64},` +
		`"snapshotId":{"type":"string","minLength":1,"maxLength":256},` +
		`"revision":{"type":"integer","minimum":1},` +
		`"nodeId":{"type":"string","minLength":1,"maxLength":1024}},` +
		`"required":["source","snapshotId","revision","nodeId"]}`

	// nodeProperties are the members of a node on the wire (children excepted).
	nodeProperties = `"id":{"type":"string","description":"Node id, unique within its snapshot."},` +
		`"type":{"type":"string","description":"Widget class, e.g. Button, TextField, Toggle."},` +
		`"automationId":{"type":"string","description":"Developer-assigned test id."},` +
		`"label":{"type":"string","description":"Accessible name."},` +
		`"text":{"type":"string","description":"Displayed text or current value."},` +
		`"role":{"type":"string","description":"Accessibility role, e.g. button, textbox, switch, list, listitem, header, window."},` +
		`"supportedActions":{"type":"array","items":{"type":"string"},"description":"Actions ui.perform_action accepts for this node."},` +
		`"visible":{"type":"boolean"},` +
		`"enabled":{"type":"boolean"},` +
		`"checked":{"type":"boolean","description":"State of a checkable node (toggle, checkbox)."},` +
		`"focused":{"type":"boolean","description":"Present and true on the node with input focus."},` +
		`"bounds":{"$ref":"#/$defs/bounds"},` +
		`"childCount":{"type":"integer","minimum":0,"description":"Number of children in the snapshot, including any left out of this result."},` +
		`"properties":{"type":"object","additionalProperties":{"type":"string"},"description":"Computed styles and other implementation-specific properties; only with includeComputedStyles."}`
	nodeRequired = `"id","type","role","supportedActions","visible","enabled","childCount"`

	treeNodeSchema = `{"type":"object","properties":{` + nodeProperties +
		`,"children":{"type":"array","items":{"$ref":"#/$defs/treeNode"}}},"required":[` + nodeRequired + `]}`

	matchSchema = `{"type":"object","properties":{` + nodeProperties +
		`,"reference":{"$ref":"#/$defs/reference"}},"required":[` + nodeRequired + `,"reference"]}`

	queryResultSchema = `{"type":"object","properties":{` +
		`"source":{"type":"string"},` +
		`"snapshotId":{"type":"string"},` +
		`"revision":{"type":"integer","minimum":1},` +
		`"count":{"type":"integer","minimum":0,"description":"Matches listed."},` +
		`"totalMatches":{"type":"integer","minimum":0,"description":"Matches in the snapshot."},` +
		`"truncated":{"type":"boolean","description":"More nodes matched than maxResults allowed."},` +
		`"matches":{"type":"array","items":{"$ref":"#/$defs/match"}}},` +
		`"required":["source","snapshotId","revision","count","totalMatches","truncated","matches"]}`

	// The arguments below accept what the official SDKs accept: JSON null for an optional
	// argument means "not given", an empty filter string means "no filter", and numbers out
	// of range are clamped (the descriptions say to what) instead of refused.

	// filterProperties are the node filters of ui.query_nodes and ui.wait.
	filterProperties = `"nodeId":{"type":["string","null"],"maxLength":1024,"description":"Exact node id."},` +
		`"automationId":{"type":["string","null"],"maxLength":1024,"description":"Exact automation id."},` +
		`"role":{"type":["string","null"],"maxLength":128,"description":"Accessibility role, case-insensitive."},` +
		`"type":{"type":["string","null"],"maxLength":128,"description":"Widget type, case-insensitive."},` +
		`"textContains":{"type":["string","null"],"maxLength":1024,"description":"Case-insensitive substring of the node's label or text."},` +
		`"action":{"type":["string","null"],"maxLength":64,"description":"Only nodes that support this action."},` +
		`"visible":{"type":["boolean","null"],"description":"Only visible (true) or hidden (false) nodes."},` +
		`"enabled":{"type":["boolean","null"],"description":"Only enabled (true) or disabled (false) nodes."}`

	// detailProperties choose the optional parts of the nodes in a result.
	detailProperties = `"includeBounds":{"type":["boolean","null"],"default":true,"description":"Include node bounds."},` +
		`"includeComputedStyles":{"type":["boolean","null"],"default":false,"description":"Include each node's computed styles and other properties the app's screen reports (its properties object)."},` +
		`"includeProperties":{"type":["boolean","null"],"default":false,"description":"Same as includeComputedStyles (the name the official SDKs' framework trees use)."}`

	// scopeProperties limit the part of the tree a result covers.
	scopeProperties = `"rootNodeId":{"type":["string","null"],"maxLength":1024,"description":"Start at this node instead of the screen root."},` +
		`"maxDepth":{"type":["integer","null"],"description":"Levels below the root to include (0: the root only), clamped to 0..` + maxDepthText + `. Default: all."},` +
		`"maxNodes":{"type":["integer","null"],"description":"Most nodes to include, breadth-first; at least 1. Default: all."}`

	// captureProperties are the arguments ui.query_nodes and ui.wait share besides the
	// filter.
	captureProperties = detailProperties + `,` + scopeProperties + `,` +
		`"maxResults":{"type":["integer","null"],"default":50,"description":"Most matches to list, clamped to 1..500."},` +
		`"root":{"type":["string","null"],"maxLength":64,"description":"A framework's root scope in the official SDKs; this app has one root, so it changes nothing."},` +
		`"includeInactivePages":{"type":["boolean","null"],"description":"A framework's inactive pages in the official SDKs; this app shows one page, so it changes nothing."}`

	maxDepthText = "100" // maxTreeDepth

	artifactProperties = `"deliveryMode":{"const":"websocket_binary"},` +
		`"wireProtocol":{"const":"ansight.file-transfer.v1"},` +
		`"transferId":{"type":"string","pattern":"^[0-9a-f]{32}$"},` +
		`"sizeBytes":{"type":"integer","minimum":0},` +
		`"fileName":{"type":"string"},` +
		`"mimeType":{"type":"string"},` +
		`"status":{"type":"string","description":"queued when sent; a host rewrites it to receiving, complete or failed."},` +
		`"artifactPath":{"type":"string","description":"Added by a host once the bytes have arrived."},` +
		`"receivedBytes":{"type":"integer","minimum":0,"description":"Added by a host."}`
	artifactRequired = `"deliveryMode","wireProtocol","transferId","sizeBytes","fileName","mimeType"`
)

// schemas holds the arguments and result schema of each tool.
type schemas struct {
	treeArgs, treeResult       jsontext.Value
	queryArgs, queryResult     jsontext.Value
	actionArgs, actionResult   jsontext.Value
	waitArgs, waitResult       jsontext.Value
	screenshotArgs, shotResult jsontext.Value
}

// buildSchemas returns the schemas for a toolkit whose screen has the given source.
func buildSchemas(source string) schemas {
	src := `"source":{"enum":[` + strconv.Quote(source) + `,null],"default":` + strconv.Quote(source) +
		`,"description":"UI source to capture; this app has one."}`
	defs := func(names ...string) string {
		all := map[string]string{
			"bounds": boundsSchema, "reference": referenceSchema, "treeNode": treeNodeSchema,
			"match": matchSchema, "queryResult": queryResultSchema,
		}
		var b strings.Builder
		b.WriteString(`,"$defs":{`)
		for i, n := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(n) + ":" + all[n])
		}
		b.WriteString("}")
		return b.String()
	}
	conditions := `"condition":{"enum":["exists","notExists","visible","enabled"],"description":"exists: a node matches; notExists: none does; visible/enabled: a matching node is visible/enabled."}`

	s := schemas{
		treeArgs: raw(`{"type":"object","properties":{` + src + `,` + detailProperties + `,` + scopeProperties + `}}`),
		treeResult: raw(`{"type":"object","properties":{` +
			`"source":{"type":"string"},` +
			`"snapshotId":{"type":"string","description":"<source>:<revision>:<random hex>"},` +
			`"revision":{"type":"integer","minimum":1,"description":"Grows with every capture of the source."},` +
			`"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"nodeCount":{"type":"integer","minimum":1,"description":"Nodes in this result."},` +
			`"totalNodes":{"type":"integer","minimum":1,"description":"Nodes in the snapshot."},` +
			`"truncated":{"type":"boolean","description":"maxDepth or maxNodes left nodes out."},` +
			`"root":{"$ref":"#/$defs/treeNode"}},` +
			`"required":["source","snapshotId","revision","capturedAtUtc","nodeCount","totalNodes","truncated","root"]` +
			defs("bounds", "treeNode") + `}`),

		queryArgs: raw(`{"type":"object","properties":{` + src + `,` +
			`"snapshotId":{"type":["string","null"],"maxLength":256,"description":"Query this retained snapshot instead of capturing a fresh one."},` +
			filterProperties + `,` + captureProperties + `}}`),
		// Top-level result schemas are object schemas (MCP output schemas must be).
		queryResult: raw(strings.TrimSuffix(queryResultSchema, "}") + defs("bounds", "reference", "match") + "}"),

		actionArgs: raw(`{"type":"object","description":"Give the target as reference (from ui.query_nodes), or as snapshotId and nodeId of the latest capture; without either the call fails with ui_action_reference_required.","properties":{` +
			`"reference":{"$ref":"#/$defs/reference"},` +
			`"source":{"type":["string","null"],"maxLength":64,"description":"The reference's source, when given without a reference."},` +
			`"snapshotId":{"type":["string","null"],"maxLength":256,"description":"The latest snapshot's id, when given without a reference."},` +
			`"nodeId":{"type":["string","null"],"maxLength":1024,"description":"The node's id in that snapshot, when given without a reference."},` +
			`"action":{"type":"string","minLength":1,"maxLength":64,"description":"tap, focus, setValue, typeText, toggle, select, or another action the node lists in supportedActions."},` +
			`"value":{"type":["string","number","boolean","null"],"maxLength":65536,"description":"The action's value: the text for setValue/typeText, a boolean for setValue on a toggle, the option for select."},` +
			`"index":{"type":["integer","null"],"description":"The item index for select or selectTab, used when value is absent."},` +
			`"checked":{"type":["boolean","null"],"description":"The state for setValue on a checkable node, used when value and index are absent."},` +
			`"options":{"type":["object","null"],"additionalProperties":true,"description":"Provider-specific action options, passed to the screen."}},` +
			`"required":["action"]` + defs("reference") + `}`),
		actionResult: raw(`{"type":"object","description":"The screen's outcome of the action, plus the action and its target.","properties":{` +
			`"source":{"type":"string"},` +
			`"action":{"type":"string"},` +
			`"reference":{"$ref":"#/$defs/reference"}},` +
			`"required":["source","action","reference"],"additionalProperties":true` + defs("reference") + `}`),

		waitArgs: raw(`{"type":"object","properties":{` + src + `,` + conditions + `,` +
			`"timeoutMilliseconds":{"type":["integer","null"],"default":5000,"description":"Give up after this long; clamped to 1..60000."},` +
			`"pollMilliseconds":{"type":["integer","null"],"default":100,"description":"Time between captures; clamped to 10..5000."},` +
			`"snapshotId":{"type":["string","null"],"maxLength":256,"description":"Ignored: every poll captures the screen afresh."},` +
			filterProperties + `,` + captureProperties + `},"required":["condition"]}`),
		waitResult: raw(`{"type":"object","properties":{` + conditions + `,` +
			`"matched":{"const":true},` +
			`"elapsedMilliseconds":{"type":"integer","minimum":0},` +
			`"query":{"$ref":"#/$defs/queryResult","description":"The capture in which the condition held."}},` +
			`"required":["condition","matched","elapsedMilliseconds","query"]` +
			defs("bounds", "reference", "match", "queryResult") + `}`),

		screenshotArgs: raw(`{"type":"object","properties":{` +
			`"format":{"enum":["png","jpeg",null],"default":"png","description":"Image encoding; jpeg is real JPEG (image/jpeg)."},` +
			`"quality":{"type":["integer","null"],"default":` + strconv.Itoa(defaultJPEGQuality) + `,"description":"JPEG quality, clamped to 1..100 (ignored for png)."},` +
			`"maxWidth":{"type":["integer","null"],"description":"Scale the image down to at most this width (at least 1), keeping its aspect ratio; never up."},` +
			`"afterScreenUpdates":{"type":["boolean","null"],"default":false,"description":"Wait until the screen has drawn its pending updates before capturing."},` +
			`"annotateNodeIds":{"type":["boolean","null"],"default":false,"description":"Draw node ids over the image. Not supported by this toolkit: the result says annotationApplied false."}}}`),
		shotResult: raw(`{"type":"object","description":"Image metadata and the ASFT transfer that carries the image bytes.","properties":{` +
			`"format":{"enum":["png","jpeg"]},` +
			`"width":{"type":"integer","minimum":1},` +
			`"height":{"type":"integer","minimum":1},` +
			`"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"annotationApplied":{"type":"boolean","description":"Whether node ids were drawn over the image."},` +
			artifactProperties + `},"required":["format","width","height","capturedAtUtc","annotationApplied",` + artifactRequired + `]}`),
	}
	return s
}

// raw checks that a hand-written schema is valid JSON and returns it compact. A typo here
// is a programming error caught by the first test run.
func raw(s string) jsontext.Value {
	v := jsontext.Value(s)
	if err := v.Compact(); err != nil {
		panic("ui: invalid built-in schema: " + err.Error() + "\n" + s)
	}
	return v
}

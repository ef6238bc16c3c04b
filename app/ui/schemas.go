package ui

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// The published JSON Schemas of the tools, written by hand so that every bound,
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

	// nodeProperties are the members of a compact v2 node (children excepted), as the
	// official SDKs' node schema has them, plus the members this toolkit adds (text,
	// flags, focused, checked, isPassword, navigatesBack, and props.value for a value
	// without text).
	nodeProperties = `"id":{"type":"string","description":"Node id, unique within its snapshot."},` +
		`"typeId":{"type":"integer","minimum":0,"description":"Index of the node's type name in the payload's types registry."},` +
		`"automationId":{"type":"string","description":"Developer-assigned test id."},` +
		`"label":{"type":"string","description":"Accessible name."},` +
		`"text":{"type":"string","description":"Displayed text or current value, when it is not the label. Never a secure node's value."},` +
		`"value":{"type":"string","description":"The whole value, when visual.value had to be cut."},` +
		`"role":{"type":"string","description":"Accessibility role, e.g. button, textbox, switch, list, listitem, header, window."},` +
		`"supportedActions":{"type":"array","items":{"type":"string"},"description":"Actions ui.perform_action accepts for this node."},` +
		`"interactable":{"type":"boolean","description":"Visible, enabled and with at least one action."},` +
		`"visible":{"type":"boolean"},` +
		`"enabled":{"type":"boolean"},` +
		`"flags":{"type":"integer","minimum":0,"description":"visible and enabled as the payload's flagBits (1 visible, 2 enabled)."},` +
		`"focusable":{"type":"boolean"},` +
		`"focused":{"const":true,"description":"Present on the node with input focus."},` +
		`"checked":{"type":"boolean","description":"State of a checkable node (toggle, checkbox)."},` +
		`"isPassword":{"const":true,"description":"Present on a secure entry: its value is never published."},` +
		`"navigatesBack":{"const":true,"description":"Present on the node that navigates back (ansight ui back taps it)."},` +
		`"childCount":{"type":"integer","minimum":0,"description":"Number of children in the snapshot, including any left out of this result."},` +
		`"visual":{"type":"object","properties":{` +
		`"opacity":{"type":"number","minimum":0,"maximum":1},` +
		`"foreground":{"type":"string"},"background":{"type":"string"},` +
		`"text":{"type":"string","maxLength":243,"description":"Displayed text, at most 240 characters and \"...\"."},` +
		`"value":{"type":"string","maxLength":243,"description":"A field's text or a checkable node's state, at most 240 characters and \"...\"; never a secure node's."}},` +
		`"required":["opacity"]},` +
		`"props":{"type":"object","properties":{"value":{"type":"string"}},"description":"The node's value when it has no text."},` +
		`"bounds":{"$ref":"#/$defs/bounds"},` +
		`"properties":{"type":"object","additionalProperties":{"type":"string"},"description":"Computed styles and other implementation-specific properties; only with includeComputedStyles."}`
	nodeRequired = `"id","typeId","role","supportedActions","interactable","visible","enabled","flags","focusable","childCount","visual"`

	treeNodeSchema = `{"type":"object","properties":{` + nodeProperties +
		`,"children":{"type":"array","items":{"$ref":"#/$defs/treeNode"}}},"required":[` + nodeRequired + `]}`

	// nodeSchema is a node without its children (ui.inspect_node's).
	nodeSchema = `{"type":"object","properties":{` + nodeProperties + `},"required":[` + nodeRequired + `]}`

	// A match is not a tree node: it names its type.
	matchSchema = `{"type":"object","properties":{` + nodeProperties +
		`,"type":{"type":"string","description":"The node's type name (its typeId resolved)."}` +
		`,"reference":{"$ref":"#/$defs/reference"}},"required":[` + nodeRequired + `,"type","reference"]}`

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
		`"maxResults":{"type":["integer","null"],"default":50,"description":"Most matches to list, clamped to 1..500."},` + pageProperties

	// pageProperties are the official root-scope options (a MAUI window or page).
	pageProperties = `"root":{"type":["string","null"],"maxLength":64,"description":"The root scope: window, currentPage or rootPage. A screen captures the window it shows, which is its current page: every scope is the same tree."},` +
		`"includeInactivePages":{"type":["boolean","null"],"description":"Include a framework's inactive pages. A screen reports only the page it shows, so there are none to include."}`

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
	treeArgs, treeResult                                                jsontext.Value
	queryArgs, queryResult                                              jsontext.Value
	actionArgs, actionResult                                            jsontext.Value
	waitArgs, waitResult                                                jsontext.Value
	screenshotArgs, shotResult                                          jsontext.Value
	inspectArgs, inspectResult                                          jsontext.Value
	showOverlayArgs, updateOverlayArgs, overlayIDArgs, overlayQueryArgs jsontext.Value
	overlayResult, overlaysResult, removeOverlayResult                  jsontext.Value
}

// buildSchemas returns the schemas for a toolkit whose screen has the given source.
func buildSchemas(source string) schemas {
	src := `"source":{"enum":[` + strconv.Quote(source) + `,null],"default":` + strconv.Quote(source) +
		`,"description":"UI source to capture; this app has one."}`
	defs := func(names ...string) string {
		all := map[string]string{
			"bounds": boundsSchema, "reference": referenceSchema, "treeNode": treeNodeSchema,
			"match": matchSchema, "queryResult": queryResultSchema, "node": nodeSchema,
			"overlay": overlaySchema, "rect": overlayRectSchema,
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
		treeArgs: raw(`{"type":"object","properties":{` + src + `,` + detailProperties + `,` + scopeProperties + `,` + pageProperties + `}}`),
		treeResult: raw(`{"type":"object","description":"A compact v2 visual tree, as the official SDKs answer: each node's type is an index into types.","properties":{` +
			`"format":{"const":"ansight.native.visual-tree.compact.v2"},` +
			`"platform":{"type":"string","description":"The runtime platform: linux, macos, windows, …"},` +
			`"source":{"type":"string"},` +
			`"adapter":{"type":"string"},` +
			`"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"snapshotId":{"type":"string","description":"<source>:<revision>:<random hex>"},` +
			`"revision":{"type":"integer","minimum":1,"description":"Grows with every capture of the source."},` +
			`"nodeIdentity":{"type":"object","description":"Node ids are valid for this snapshot only: a reference is stale after this revision.","properties":{` +
			`"scope":{"const":"snapshot"},"source":{"type":"string"},"staleAfterRevision":{"type":"integer"}},"required":["scope","source","staleAfterRevision"]},` +
			`"rootScope":{"enum":["window","currentPage","rootPage"],"description":"The root scope asked for; a screen's window is its current page."},` +
			`"flagBits":{"type":"object","properties":{"visible":{"const":1},"enabled":{"const":2}},"required":["visible","enabled"]},` +
			`"types":{"type":"array","minItems":1,"items":{"type":"string","minLength":1},"description":"The type registry nodes' typeId index into."},` +
			`"nodeCount":{"type":"integer","minimum":1,"description":"Nodes in this result."},` +
			`"totalNodes":{"type":"integer","minimum":1,"description":"Nodes in the snapshot."},` +
			`"truncated":{"type":"boolean","description":"maxDepth or maxNodes left nodes out."},` +
			`"root":{"$ref":"#/$defs/treeNode"}},` +
			`"required":["format","platform","source","adapter","capturedAtUtc","snapshotId","revision","nodeIdentity","flagBits","types","nodeCount","totalNodes","truncated","root"]` +
			defs("bounds", "treeNode") + `}`),

		inspectArgs: raw(`{"type":"object","description":"Name the node by reference, or by nodeId (alias id) of the latest snapshot (snapshotId) or of a fresh capture (no snapshotId).","properties":{` +
			`"reference":{"$ref":"#/$defs/reference"},` + src + `,` +
			`"snapshotId":{"type":["string","null"],"maxLength":256,"description":"The latest snapshot's id; without it the screen is captured afresh."},` +
			`"nodeId":{"type":["string","null"],"maxLength":1024},` +
			`"id":{"type":["string","null"],"maxLength":1024,"description":"Same as nodeId."},` +
			`"includeAncestors":{"type":["boolean","null"],"default":false,"description":"List the node's ancestors, root first."},` +
			`"includeDescendants":{"type":["boolean","null"],"default":false,"description":"List the node's descendants, in document order."},` +
			`"includeProperties":{"type":["boolean","null"],"default":true,"description":"Include each node's properties the screen reports."}}` +
			defs("reference") + `}`),
		inspectResult: raw(`{"type":"object","properties":{` +
			`"format":{"const":"ansight.native.visual-tree.compact.v2"},` +
			`"platform":{"type":"string"},"source":{"type":"string"},"adapter":{"type":"string"},` +
			`"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"snapshotId":{"type":"string"},"revision":{"type":"integer","minimum":1},` +
			`"reference":{"$ref":"#/$defs/reference"},` +
			`"types":{"type":"array","minItems":1,"items":{"type":"string","minLength":1}},` +
			`"node":{"$ref":"#/$defs/node"},` +
			`"ancestors":{"type":"array","items":{"$ref":"#/$defs/node"}},` +
			`"descendants":{"type":"array","items":{"$ref":"#/$defs/node"}}},` +
			`"required":["format","platform","source","adapter","capturedAtUtc","snapshotId","revision","reference","types","node"]` +
			defs("bounds", "reference", "node") + `}`),

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
			`"platform":{"type":"string"},` +
			`"format":{"enum":["png","jpeg"]},` +
			`"width":{"type":"integer","minimum":1},` +
			`"height":{"type":"integer","minimum":1},` +
			`"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"annotationApplied":{"type":"boolean","description":"Whether node ids were drawn over the image."},` +
			artifactProperties + `},"required":["platform","format","width","height","capturedAtUtc","annotationApplied",` + artifactRequired + `]}`),

		showOverlayArgs: raw(`{"type":"object","description":"Draws an input-transparent overlay over the screen: over a node (nodeId), rectangles (rects), or one rectangle (x, y, width, height), in the tree's points.","properties":{` +
			`"overlayId":{"type":["string","null"],"maxLength":128,"description":"The overlay's id; a generated one when omitted. An overlay with the same id is replaced."},` +
			overlayGeometry + `,` + overlayStyleArgs + `,` +
			`"durationMs":{"type":["integer","null"],"default":5000,"description":"Lifetime in milliseconds, clamped to 0..600000; 0 keeps it until removed."},` +
			overlayMetadataArg + `}` + defs("rect") + `}`),
		updateOverlayArgs: raw(`{"type":"object","description":"Changes a live overlay; omitted arguments keep their value.","properties":{` +
			`"overlayId":{"type":"string","minLength":1,"maxLength":128},` +
			overlayGeometry + `,` + overlayStyleArgs + `,` +
			`"durationMs":{"type":["integer","null"],"description":"A new lifetime from now in milliseconds, clamped to 0..600000; 0 keeps it until removed."},` +
			overlayMetadataArg + `,` +
			`"metadataMode":{"enum":["merge","replace","clear",null],"default":"merge","description":"merge keeps the keys not given; replace swaps the object; clear removes all metadata."}},` +
			`"required":["overlayId"]` + defs("rect") + `}`),
		overlayIDArgs: raw(`{"type":"object","properties":{"overlayId":{"type":"string","minLength":1,"maxLength":128}},"required":["overlayId"]}`),
		overlayQueryArgs: raw(`{"type":"object","properties":{` +
			`"metadataKey":{"type":["string","null"],"maxLength":64,"description":"Only overlays whose metadata has this key."},` +
			`"metadataValue":{"type":["string","null"],"maxLength":256,"description":"Only overlays whose metadataKey has this value (case-insensitive)."}}}`),
		overlayResult: raw(`{"type":"object","properties":{` +
			`"platform":{"type":"string"},"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"overlay":{"$ref":"#/$defs/overlay"}},"required":["platform","capturedAtUtc","overlay"]` + defs("overlay", "rect") + `}`),
		overlaysResult: raw(`{"type":"object","properties":{` +
			`"platform":{"type":"string"},"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"count":{"type":"integer","minimum":0},` +
			`"overlays":{"type":"array","items":{"$ref":"#/$defs/overlay"}}},"required":["platform","capturedAtUtc","count","overlays"]` +
			defs("overlay", "rect") + `}`),
		removeOverlayResult: raw(`{"type":"object","properties":{` +
			`"platform":{"type":"string"},"capturedAtUtc":{"type":"string","format":"date-time"},` +
			`"overlayId":{"type":"string"},"removed":{"type":"boolean","description":"Whether a live overlay had the id."},` +
			`"overlay":{"oneOf":[{"$ref":"#/$defs/overlay"},{"type":"null"}],"description":"The removed overlay, null when none had the id."}},` +
			`"required":["platform","capturedAtUtc","overlayId","removed","overlay"]` + defs("overlay", "rect") + `}`),
	}
	return s
}

// Fragments of the overlay tools' schemas.
const (
	overlayRectSchema = `{"type":"object","properties":{` +
		`"x":{"type":"number"},"y":{"type":"number"},"width":{"type":"number"},"height":{"type":"number"},` +
		`"label":{"type":["string","null"],"maxLength":256}},"required":["x","y","width","height"]}`

	overlayGeometry = `"nodeId":{"type":["string","null"],"maxLength":1024,"description":"Highlight this node's bounds (of the latest snapshot, else of the screen now)."},` +
		`"rects":{"type":["array","null"],"items":{"$ref":"#/$defs/rect"},"description":"Rectangles to draw (1..128)."},` +
		`"x":{"type":["number","null"]},"y":{"type":["number","null"]},` +
		`"width":{"type":["number","null"]},"height":{"type":["number","null"]},` +
		`"label":{"type":["string","null"],"maxLength":256,"description":"The label of a node's or of the single rectangle."},` +
		`"coordinateSpace":{"enum":["window","visualTree",null],"default":"window","description":"A screen's window is its tree's coordinate space: both read the same."}`

	overlayStyleArgs = `"strokeColor":{"type":["string","null"],"maxLength":32,"description":"#RGB, #ARGB, #RRGGBB, #AARRGGBB or a colour name; default #FF3B30."},` +
		`"fillColor":{"type":["string","null"],"maxLength":32,"description":"Fill colour; null, none or transparent for no fill (the default)."},` +
		`"strokeWidth":{"type":["number","null"],"default":2,"description":"Clamped to 0..128 points."},` +
		`"cornerRadius":{"type":["number","null"],"default":3,"description":"Clamped to 0..256 points."}`

	overlayMetadataArg = `"metadata":{"type":["object","null"],"additionalProperties":{"type":["string","number","boolean","null"]},"maxProperties":16,"description":"Why the overlay exists: up to 16 scalar entries."}`

	overlaySchema = `{"type":"object","properties":{` +
		`"id":{"type":"string"},"platform":{"type":"string"},` +
		`"createdAtUtc":{"type":"string","format":"date-time"},` +
		`"expiresAtUtc":{"type":["string","null"],"format":"date-time","description":"null: until removed."},` +
		`"durationMs":{"type":"integer","minimum":0},` +
		`"remainingMs":{"type":["integer","null"],"minimum":0},` +
		`"transient":{"type":"boolean","description":"Whether it removes itself."},` +
		`"inputTransparent":{"const":true},` +
		`"coordinateSpace":{"const":"window"},` +
		`"style":{"type":"object","properties":{"strokeColor":{"type":"string"},"fillColor":{"type":["string","null"]},` +
		`"strokeWidth":{"type":"number"},"cornerRadius":{"type":"number"}},"required":["strokeColor","fillColor","strokeWidth","cornerRadius"]},` +
		`"rects":{"type":"array","items":{"$ref":"#/$defs/rect"}},` +
		`"metadata":{"type":"object","additionalProperties":true}},` +
		`"required":["id","platform","createdAtUtc","expiresAtUtc","durationMs","remainingMs","transient","inputTransparent","coordinateSpace","style","rects","metadata"]}`
)

// raw checks that a hand-written schema is valid JSON and returns it compact. A typo here
// is a programming error caught by the first test run.
func raw(s string) jsontext.Value {
	v := jsontext.Value(s)
	if err := v.Compact(); err != nil {
		panic("ui: invalid built-in schema: " + err.Error() + "\n" + s)
	}
	return v
}

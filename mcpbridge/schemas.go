package mcpbridge

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
)

// The meta-tools' schemas are written by hand: they are part of what every agent reads,
// so each word is chosen, and they use only keywords every client validator knows (no
// $schema, no $id: the TypeScript SDK compiles output schemas with a draft-07 validator).
// Input schemas are exact and closed: they validate what agents send. Clients are shown
// their portable form (portable.go), which every model provider accepts: no
// additionalProperties, typed enums, free-form objects asked for as JSON text. Output
// schemas stay open, so that adding a field later does not break a validating client
// (they go to MCP clients, never to a model provider).

// Bounds of meta-tool inputs.
const (
	defaultMaxResults = 20
	maxMaxResults     = 50
	maxBatchCalls     = 32 // docs/protocol/calls.md#batches
	maxAfterDelayMS   = 2000
	maxIDLength       = 256
)

// Schema fragments shared by several tools.
var (
	selectorProps = `"sessionId":{"type":"string","minLength":1,"maxLength":` + strconv.Itoa(maxIDLength) + `,"description":"From ansight_list_sessions; optional when one app is connected."},` +
		`"appId":{"type":"string","minLength":1,"maxLength":` + strconv.Itoa(maxIDLength) + `,"description":"Or pick the session by app id."}`

	toolIDProp = `"toolId":{"type":"string","minLength":1,"maxLength":` + strconv.Itoa(maxIDLength) + `,"description":"Exact tool id, as ansight_search_app_tools lists it."}`

	argumentsProp = `"arguments":{"type":"object","additionalProperties":true,"description":"Arguments matching the tool's argumentsSchema (ansight_describe_app_tool), as JSON text of an object: {\"title\":\"Milk\"} (the object itself is taken too). Omit for none."}`

	afterSchema = `{"type":"object","description":"Evidence captured after the call succeeds (an evidence failure does not fail the call).","properties":{` +
		`"include":{"type":"array","items":{"enum":["visualTree","screenshot"]},"uniqueItems":true,"maxItems":2,"description":"Default [\"visualTree\"]."},` +
		`"delayMilliseconds":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(maxAfterDelayMS) + `,"description":"Wait before capturing (UI settling)."},` +
		`"visualTreeArguments":{"type":"object","additionalProperties":true,"description":"Arguments of ui.get_visual_tree, as JSON text of an object."},` +
		`"screenshotArguments":{"type":"object","additionalProperties":true,"description":"Arguments of ui.get_screenshot, as JSON text of an object."}},` +
		`"additionalProperties":false}`

	callIDProp = `"callId":{"type":"string","minLength":1,"maxLength":128,"description":"Your id for this call, echoed in the result."}`

	snapshotProp = `"snapshot":{"type":"boolean","default":false,"description":"Also return a fresh ansight_snapshot of the screen once the call ended."}`

	timeoutProp = `"timeoutMs":{"type":"integer","minimum":1,"maximum":` + strconv.Itoa(hostapi.MaxTimeoutMS) + `,"description":"How long the host waits for the app's answer, in ms. Default: what the call asks for (ui.wait's timeoutMilliseconds, the tool's declared duration) plus 5 s, at least 20 s."}`

	// truncationSchema describes a member left out because the answer was over the cap.
	truncationSchema = `{"type":"object","description":"Too large: saved (path, resultId, outline); ansight_read_result reads it."}`

	// The output schemas are short: the tools' descriptions and the answers explain
	// themselves, and every schema word is paid for in every conversation.
	errorSchema = `{"type":"object","description":"Why the call failed (also kind, refusedBy, details); hint says what would fix or allow it.","properties":{` +
		`"code":{"type":"string"},"message":{"type":"string"},"retryable":{"type":"boolean"},"hint":{"type":"string"}},` +
		`"required":["code","message","retryable"]}`

	// outcomeProps are the fields of a call's outcome: a result or an error.
	outcomeProps = `"success":{"type":"boolean"},"message":{"type":"string"},"result":{},"resultTruncated":` + truncationSchema + `,` +
		`"evidence":{"type":"object"},"evidenceTruncated":` + truncationSchema + `,"error":` + errorSchema

	artifactsProp = `"artifacts":{"type":"array","items":{"type":"object"},"description":"Files the app sent, saved by the host: path, mimeType, sizeBytes, status; image says whether this result shows it."}`

	denialSchema = `{"type":"object","properties":{"code":{"type":"string"},"reason":{"type":"string"}}}`

	policyEnum = `{"enum":["read","write","critical"]}`
)

// Input and output schemas of the meta-tools.
var (
	listSessionsIn = compactSchema(`{"type":"object","properties":{` +
		`"includeDisconnected":{"type":"boolean","default":false,"description":"Also list sessions that ended recently."}},` +
		`"additionalProperties":false}`)
	listSessionsOut = compactSchema(`{"type":"object","properties":{` +
		`"sessions":{"type":"array","items":{"type":"object","properties":{` +
		`"sessionId":{"type":"string"},"appId":{"type":"string"},` +
		`"label":{"type":"string","description":"The name the user gave the session (ansight session rename); absent when none."},` +
		`"appName":{"type":"string"},"appVersion":{"type":"string"},` +
		`"device":{"type":"string"},"platform":{"type":"string"},"state":{"type":"string"},"appState":{"type":"string"},` +
		`"maxToolPolicy":{"type":"string"},"revision":{"type":"string"},"toolCount":{"type":"integer"}},` +
		`"required":["sessionId","appId","state"]}},` +
		`"allowCritical":{"type":"boolean"},"success":{"type":"boolean"},"error":` + errorSchema + `}}`)

	searchIn = compactSchema(`{"type":"object","properties":{` + selectorProps + `,` +
		`"query":{"type":"string","maxLength":200,"description":"Words that must all occur in a tool's id, name, description, category or keywords."},` +
		`"feature":{"type":"string","maxLength":200,"description":"More required words: a feature area."},` +
		`"category":{"type":"string","maxLength":100,"description":"Exact category."},` +
		`"policy":{"enum":["read","write","critical"],"description":"Only tools of this policy."},` +
		`"executableOnly":{"type":"boolean","default":true,"description":"Only tools callable now. false also lists denied, unavailable and above-grant ones, with the reason."},` +
		`"maxResults":{"type":"integer","minimum":1,"maximum":` + strconv.Itoa(maxMaxResults) + `,"default":` + strconv.Itoa(defaultMaxResults) + `}},` +
		`"additionalProperties":false}`)
	searchOut = compactSchema(`{"type":"object","properties":{` +
		`"sessionId":{"type":"string"},"appId":{"type":"string"},"revision":{"type":"string"},` +
		`"totalCount":{"type":"integer"},"count":{"type":"integer"},"truncated":{"type":"boolean"},` +
		`"categories":{"type":"object","description":"Matches per category, when truncated."},` +
		`"aboveGrant":{"type":"integer","description":"Matches not offered: above the session's grant."},` +
		`"notCallable":{"type":"integer","description":"Matches not callable now, left out: executableOnly false lists them with the reason."},` +
		`"grantHint":{"type":"string","description":"How the user can raise the grant, when tools above it are listed."},` +
		`"tools":{"type":"array","items":{"type":"object","properties":{` +
		`"id":{"type":"string"},"description":{"type":"string"},"policy":` + policyEnum + `,` +
		`"executable":{"type":"boolean"},"denial":` + denialSchema + `,"prerequisites":{"type":"array","items":{"type":"string"}}},` +
		`"required":["id","description","policy"]}},` +
		`"success":{"type":"boolean"},"error":` + errorSchema + `}}`)

	describeIn = compactSchema(`{"type":"object","properties":{` + selectorProps + `,` + toolIDProp + `},` +
		`"required":["toolId"],"additionalProperties":false}`)
	describeOut = compactSchema(`{"type":"object","properties":{` +
		`"sessionId":{"type":"string"},"revision":{"type":"string"},` +
		`"tool":{"type":"object","properties":{"id":{"type":"string"},"policy":` + policyEnum + `,` +
		`"argumentsSchema":{},"resultSchema":{},"executable":{"type":"boolean"},"denial":` + denialSchema + `},"required":["id","policy"]},` +
		`"success":{"type":"boolean"},"error":` + errorSchema + `}}`)

	callIn = compactSchema(`{"type":"object","properties":{` + selectorProps + `,` + toolIDProp + `,` + argumentsProp + `,` +
		callIDProp + `,"after":` + afterSchema + `,` + snapshotProp + `,` + timeoutProp + `},` +
		`"required":["toolId"],"additionalProperties":false}`)
	callOut = compactSchema(`{"type":"object","properties":{` +
		`"sessionId":{"type":"string"},"toolId":{"type":"string"},"callId":{"type":"string"},` + outcomeProps + `,` +
		artifactsProp + `,"snapshot":{"type":"string"},"durationMs":{"type":"integer"}}}`)

	batchIn = compactSchema(`{"type":"object","properties":{` + selectorProps + `,` +
		`"calls":{"type":"array","minItems":1,"maxItems":` + strconv.Itoa(maxBatchCalls) + `,"description":"Run in order; stops at the first failure unless continueOnError.","items":{"type":"object","properties":{` +
		toolIDProp + `,` + argumentsProp + `,` + callIDProp + `,"after":` + afterSchema + `},` +
		`"required":["toolId"],"additionalProperties":false}},` +
		`"continueOnError":{"type":"boolean","default":false,"description":"Run the remaining calls after a failure."},` + snapshotProp + `,` + timeoutProp + `},` +
		`"required":["calls"],"additionalProperties":false}`)
	batchOut = compactSchema(`{"type":"object","properties":{` +
		`"sessionId":{"type":"string"},"success":{"type":"boolean"},"completed":{"type":"integer"},"requested":{"type":"integer"},` +
		`"stoppedEarly":{"type":"boolean"},` +
		`"results":{"type":"array","items":{"type":"object","properties":{` +
		`"index":{"type":"integer"},"callId":{"type":"string"},"toolId":{"type":"string"},` + outcomeProps + `},` +
		`"required":["index","success"]}},` +
		`"error":` + errorSchema + `,` + artifactsProp + `,"snapshot":{"type":"string"},"durationMs":{"type":"integer"}}}`)

	screenshotIn = compactSchema(`{"type":"object","properties":{` + selectorProps + `,` +
		`"format":{"enum":["png","jpeg"],"description":"Image format the app encodes (default png)."},` +
		`"maxWidth":{"type":"integer","minimum":64,"maximum":4096,"description":"Scale the image you receive down to this width (default set by the bridge). The saved file keeps full size."},` +
		`"arguments":{"type":"object","additionalProperties":true,"description":"More arguments for the app's ui.get_screenshot, as JSON text of an object."}},` +
		`"additionalProperties":false}`)
	recordFlowIn = compactSchema(`{"type":"object","properties":{` + selectorProps + `,` +
		`"name":{"type":"string","maxLength":200,"description":"The flow's name."}},"additionalProperties":false}`)
	recordFlowOut = compactSchema(`{"type":"object","properties":{"sessionId":{"type":"string"},"origin":{"type":"string"},` +
		`"steps":{"type":"integer"},"flow":{"type":"string","description":"The flow file's text (YAML)."},` +
		`"success":{"type":"boolean"},"error":` + errorSchema + `}}`)
	screenshotOut = compactSchema(`{"type":"object","properties":{` +
		`"sessionId":{"type":"string"},"path":{"type":"string","description":"The full-size image file."},"mimeType":{"type":"string"},` +
		`"width":{"type":"integer"},"height":{"type":"integer"},"originalWidth":{"type":"integer"},"originalHeight":{"type":"integer"},` +
		`"scaled":{"type":"boolean"},"capturedAtUtc":{"type":"string"},` +
		`"success":{"type":"boolean"},"error":` + errorSchema + `}}`)
)

var (
	snapshotIn = compactSchema(`{"type":"object","properties":{` + selectorProps + `,` +
		`"screenshot":{"type":"boolean","default":false,"description":"Also return the screen as an image."},` +
		`"includeBounds":{"type":"boolean","default":false,"description":"Add each node's position and size (screen points)."},` +
		`"maxNodes":{"type":"integer","minimum":1,"maximum":` + strconv.Itoa(maxSnapshotNodes) + `,"default":` + strconv.Itoa(defaultSnapshotNodes) + `}},` +
		`"additionalProperties":false}`)

	readResultIn = compactSchema(`{"type":"object","properties":{` +
		`"resultId":{"type":"string","minLength":1,"maxLength":64,"description":"From resultTruncated."},` +
		`"pointer":{"type":"string","maxLength":1000,"description":"RFC 6901 JSON pointer to the member to read, e.g. /items/3/title. Default: the whole result."},` +
		`"offset":{"type":"integer","minimum":0,"description":"First array item, or first byte of a string (nextOffset of the previous page)."},` +
		`"maxBytes":{"type":"integer","minimum":` + strconv.Itoa(minReadBytes) + `,"maximum":1048576,"description":"Page size (default and most: half the bridge's result cap)."}},` +
		`"required":["resultId"],"additionalProperties":false}`)
	readResultOut = compactSchema(`{"type":"object","properties":{` +
		`"resultId":{"type":"string"},"pointer":{"type":"string"},"sizeBytes":{"type":"integer"},"value":{},` +
		`"items":{"type":"array"},"text":{"type":"string"},"offset":{"type":"integer"},"total":{"type":"integer"},"nextOffset":{"type":"integer"},` +
		`"outline":{},"note":{"type":"string"},"success":{"type":"boolean"},"error":` + errorSchema + `}}`)
)

// compactSchema checks that a hand-written schema is valid JSON and returns it compact. A typo is
// a programming error that the first test run catches.
func compactSchema(s string) jsontext.Value {
	v := jsontext.Value(strings.Clone(s))
	if err := v.Compact(); err != nil {
		panic("mcpbridge: invalid built-in schema: " + err.Error() + "\n" + s)
	}
	return v
}

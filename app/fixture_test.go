package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// fixedTime is the clock of every deterministic test.
var fixedTime = time.Date(2026, 8, 25, 0, 0, 0, 50_000_000, time.UTC)

// fixture is an app with a tool for every path of the dispatcher: the standard UI tools
// (simplified), a map tool whose availability follows the fixture's state, failing,
// panicking and critical tools, a legacy flattened-string tool and a blob tool that
// produces results of an exact payload size.
type fixture struct {
	app *App

	mu    sync.Mutex
	state map[string]string
	calls map[string]int // executions per tool id
}

func (f *fixture) get(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state[key]
}

func (f *fixture) set(key, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state[key] = value
}

func (f *fixture) ran(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[id]++
}

func (f *fixture) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[id]
}

// screenshotSize is the byte count of the fixture's screenshot: a full chunk and a bit.
const screenshotSize = ChunkSize + 4464

// artifactBytes is deterministic artifact content of n bytes.
func artifactBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

type nodeRef struct {
	Source     string `json:"source"`
	SnapshotID string `json:"snapshotId"`
	Revision   int    `json:"revision"`
	NodeID     string `json:"nodeId"`
}

type queryNodesIn struct {
	AutomationID string `json:"automationId,omitzero" jsonschema:"exact automation id"`
	MaxResults   int    `json:"maxResults,omitzero"`
}

type queryNodesOut struct {
	Source     string      `json:"source"`
	SnapshotID string      `json:"snapshotId"`
	Revision   int         `json:"revision"`
	Count      int         `json:"count"`
	Matches    []nodeMatch `json:"matches"`
}

type nodeMatch struct {
	ID        string  `json:"id"`
	Role      string  `json:"role"`
	Reference nodeRef `json:"reference"`
}

type performIn struct {
	Reference nodeRef `json:"reference"`
	Action    string  `json:"action" jsonschema:"tap, focus, setValue, typeText"`
	Value     string  `json:"value,omitzero"`
}

type performOut struct {
	Action    string  `json:"action"`
	Reference nodeRef `json:"reference"`
}

type screenshotIn struct {
	Format string `json:"format,omitzero"`
}

type screenshotOut struct {
	Format string `json:"format"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	wire.TransferDescriptor
}

type mapOut struct {
	Tiles int `json:"tiles"`
}

type blobIn struct {
	PayloadBytes int    `json:"payloadBytes"`
	Pattern      string `json:"pattern,omitzero"`
}

type failIn struct {
	Mode string `json:"mode"`
}

const snapshot = "native:42:example"

func def(id, name, category string, p wire.Policy) catalog.Definition {
	return catalog.Definition{ID: id, Name: name, Description: name + " (fixture).", Category: category, Policy: p}
}

// newFixture builds the fixture app with pinned clock and ids.
func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = func() time.Time { return fixedTime }
	}
	if opts.IDs == nil {
		opts.IDs = transcript.CountingIDs()
	}
	f := &fixture{app: New(opts), state: map[string]string{"map.loaded": "true", "demo.flaky": "up"}, calls: map[string]int{}}
	a := f.app
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// ui.get_visual_tree: legacy flattened-string like the reference; echoes what it got.
	d := def(wire.VisualTreeToolID, "Get Visual Tree", "ui", wire.PolicyRead)
	d.Description = "Captures the visual tree of the current screen."
	d.ArgumentEncoding = wire.ArgumentEncodingFlattenedString
	d.ArgumentsSchema = jsontext.Value(`{"type":"object","properties":{"source":{"type":"string"},"maxDepth":{"type":"integer"}}}`)
	d.ResultSchema = jsontext.Value(`{"type":"object","additionalProperties":true}`)
	must(a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) {
		f.ran(c.ToolID)
		return map[string]any{"source": "native", "snapshotId": snapshot, "revision": 42,
			"root":      map[string]any{"id": "root", "role": "window", "children": []any{map[string]any{"id": "root.0.save", "role": "button"}}},
			"arguments": c.StringArguments}, nil
	}, Availability: func(ctx context.Context) wire.Runtime {
		if f.get("ui.tree") == "off" {
			return wire.Runtime{Code: "visual_tree_provider_not_found", Reason: "No visual tree provider is attached."}
		}
		return wire.Runtime{Available: true}
	}}))

	d = def("ui.query_nodes", "Query UI Nodes", "ui", wire.PolicyRead)
	d.Keywords = "find search automation"
	must(Register(a, d, func(ctx context.Context, c *Call, in queryNodesIn) (queryNodesOut, error) {
		f.ran(c.ToolID)
		out := queryNodesOut{Source: "native", SnapshotID: snapshot, Revision: 42}
		if in.AutomationID == "" || in.AutomationID == "save" {
			out.Matches = append(out.Matches, nodeMatch{ID: "root.0.save", Role: "button",
				Reference: nodeRef{Source: "native", SnapshotID: snapshot, Revision: 42, NodeID: "root.0.save"}})
		}
		out.Count = len(out.Matches)
		return out, nil
	}))

	d = def("ui.perform_action", "Perform UI Action", "ui", wire.PolicyWrite)
	d.Description = "Performs a generic action against a current snapshot-scoped UI node."
	d.PrerequisiteToolIDs = []string{"ui.query_nodes"}
	must(Register(a, d, func(ctx context.Context, c *Call, in performIn) (performOut, error) {
		f.ran(c.ToolID)
		if in.Reference.SnapshotID != snapshot || in.Reference.Revision != 42 {
			return performOut{}, ToolErrorDetails(wire.CodeStaleNodeReference, "The node reference is stale.", map[string]any{
				"source": in.Reference.Source, "snapshotId": in.Reference.SnapshotID, "nodeId": in.Reference.NodeID,
				"latestRevision": 42, "refreshWith": "ui.query_nodes"})
		}
		if in.Action != "tap" && in.Action != "setValue" {
			return performOut{}, ToolErrorf(wire.CodeUIActionNotSupported, "Node %s does not support %q.", in.Reference.NodeID, in.Action)
		}
		return performOut{Action: in.Action, Reference: in.Reference}, nil
	}, WithExclusive()))

	d = def(wire.ScreenshotToolID, "Get Screenshot", "ui", wire.PolicyRead)
	must(Register(a, d, func(ctx context.Context, c *Call, in screenshotIn) (screenshotOut, error) {
		f.ran(c.ToolID)
		format := cmpOr(in.Format, "png")
		desc := c.SendArtifact("screenshot."+format, "image/"+format, screenshotSize, bytes.NewReader(artifactBytes(screenshotSize)))
		return screenshotOut{Format: format, Width: 320, Height: 640, TransferDescriptor: desc}, nil
	}))

	d = def("map.capture", "Capture Map", "map", wire.PolicyRead)
	d.Keywords = "tiles snapshot"
	d.PrerequisiteToolIDs = []string{"route.open"}
	must(Register(a, d, func(ctx context.Context, c *Call, in struct{}) (mapOut, error) {
		f.ran(c.ToolID)
		return mapOut{Tiles: 12}, nil
	}, WithAvailability(func(ctx context.Context) wire.Runtime {
		if f.get("map.loaded") == "true" {
			return wire.Runtime{Available: true}
		}
		return wire.Runtime{Code: "map_not_loaded", Reason: "No map is loaded.", RequiredState: "map loaded", Remediation: "Call route.open first.", Retryable: true}
	})))

	must(Register(a, def("route.open", "Open Route", "routing", wire.PolicyWrite), func(ctx context.Context, c *Call, in struct {
		Route string `json:"route"`
	}) (map[string]string, error) {
		f.ran(c.ToolID)
		f.set("map.loaded", "true")
		return map[string]string{"opened": in.Route}, nil
	}))

	// demo.flaky: unavailable without a code of its own when state says so.
	must(Register(a, def("demo.flaky", "Flaky", "demo", wire.PolicyRead), func(ctx context.Context, c *Call, in struct{}) (struct{}, error) {
		f.ran(c.ToolID)
		return struct{}{}, nil
	}, WithAvailability(func(ctx context.Context) wire.Runtime {
		return wire.Runtime{Available: f.get("demo.flaky") == "up"}
	})))

	must(Register(a, def("demo.fail", "Fail", "demo", wire.PolicyRead), func(ctx context.Context, c *Call, in failIn) (struct{}, error) {
		f.ran(c.ToolID)
		switch in.Mode {
		case "plain":
			return struct{}{}, errors.New("the widget is out of order")
		case "coded":
			return struct{}{}, ToolErrorf("widget_jammed", "The widget is jammed.")
		case "retryable":
			return struct{}{}, fmt.Errorf("wrapped: %w", &wire.Error{Code: "widget_busy", Message: "The widget is busy.", Retryable: true, Details: jsontext.Value(`{"retryAfterMilliseconds":100}`)})
		case "panic":
			panic("widget exploded")
		case "badresult":
			return struct{}{}, nil
		}
		return struct{}{}, nil
	}))
	// demo.badresult returns a result its schema refuses.
	d = def("demo.badresult", "Bad Result", "demo", wire.PolicyRead)
	d.ArgumentsSchema = jsontext.Value(`{"type":"object"}`)
	d.ResultSchema = jsontext.Value(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)
	must(a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) {
		f.ran(c.ToolID)
		return map[string]any{"count": "many", "extra": true}, nil
	}}))

	must(Register(a, def("admin.wipe", "Wipe Data", "admin", wire.PolicyCritical), func(ctx context.Context, c *Call, in struct{}) (struct{}, error) {
		f.ran(c.ToolID)
		return struct{}{}, nil
	}))

	d = def("legacy.echo", "Legacy Echo", "demo", wire.PolicyRead)
	d.ArgumentEncoding = wire.ArgumentEncodingFlattenedString
	must(Register(a, d, func(ctx context.Context, c *Call, in map[string]string) (map[string]string, error) {
		f.ran(c.ToolID)
		return in, nil
	}))

	// demo.blob returns a string result sized so that the tool.result payload is exactly
	// payloadBytes long (without evidence or message).
	d = def("demo.blob", "Blob", "demo", wire.PolicyRead)
	d.ResultSchema = jsontext.Value(`{"type":"string"}`)
	must(Register(a, d, func(ctx context.Context, c *Call, in blobIn) (jsontext.Value, error) {
		f.ran(c.ToolID)
		overhead := len(`{"toolId":"demo.blob","success":true,"result":""}`)
		n := in.PayloadBytes - overhead
		if n < 0 || in.PayloadBytes > 1<<20 {
			return nil, ToolErrorf("blob_size_invalid", "payloadBytes must be %d..%d", overhead, 1<<20)
		}
		b := make([]byte, 0, n+2)
		b = append(b, '"')
		switch in.Pattern {
		case "random": // base64-alphabet noise: gzip plus base64 does not shrink it
			const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
			x := uint64(0x9E3779B97F4A7C15)
			for range n {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				b = append(b, alphabet[x%64])
			}
		default:
			for i := range n {
				b = append(b, "abcdefgh"[i%8])
			}
		}
		return append(b, '"'), nil
	}))
	return f
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// message is one message the app wrote.
type message struct {
	typ  transport.MessageType
	data []byte
}

// recorder is a MessageWriter that keeps every message.
type recorder struct {
	mu   sync.Mutex
	msgs []message
	err  error // returned by Write when set
}

func (r *recorder) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.msgs = append(r.msgs, message{typ, bytes.Clone(data)})
	return nil
}

func (r *recorder) take() []message {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.msgs
	r.msgs = nil
	return m
}

// handle sends one message through Handle and returns what the app wrote.
func (f *fixture) handle(t testing.TB, msg string) []message {
	t.Helper()
	r := &recorder{}
	ok, err := f.app.Handle(context.Background(), []byte(msg), r)
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if !ok {
		t.Fatalf("Handle did not claim %s", msg)
	}
	return r.take()
}

// response decodes the one text response of msgs (and checks there is exactly one).
func response(t testing.TB, msgs []message) (*wire.Envelope, jsontext.Value) {
	t.Helper()
	if len(msgs) == 0 || msgs[0].typ != transport.MessageText {
		t.Fatalf("no text response in %d messages", len(msgs))
	}
	env, err := wire.DecodeEnvelope(msgs[0].data)
	if err != nil {
		t.Fatalf("response does not decode: %v\n%s", err, msgs[0].data)
	}
	p, err := wire.DecodePayload(env.Payload, wire.DefaultMaxInflatedBytes)
	if err != nil {
		t.Fatalf("response payload does not decode: %v", err)
	}
	return &env, p
}

// errorCode returns the code of a tool.error response, "" for other responses.
func errorCode(t testing.TB, msgs []message) wire.Code {
	t.Helper()
	env, p := response(t, msgs)
	if env.Type != wire.TypeError {
		return ""
	}
	var e wire.Error
	if err := wire.Unmarshal(p, &e); err != nil {
		t.Fatal(err)
	}
	return e.Code
}

// callMsg builds a tool.call request.
func callMsg(id, payload string) string {
	return `{"type":"tool.call","id":"` + id + `","sessionId":"s1","payload":` + payload + `}`
}

// failingReader fails after some bytes.
type failingReader struct {
	n      int
	closed *bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

func (r *failingReader) Close() error {
	if r.closed != nil {
		*r.closed = true
	}
	return nil
}

var _ io.ReadCloser = (*failingReader)(nil)

// itoa is strconv.Itoa, short.
func itoa(n int) string { return strconv.Itoa(n) }

package mcpbridge

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// fakeBackend is an in-memory host with one or more sessions. It annotates and refuses like
// the real host (control.Backend over host/tools): entries above the grant or unavailable
// carry a denial, and calls of them are refused by the host.
type fakeBackend struct {
	mu       sync.Mutex
	sessions []hostapi.Session
	catalogs map[string]*fakeCatalog // by session id
	calls    []hostapi.CallRequest   // every call the "app" received, in order
	batches  int
	dir      string // where artifacts are written
	// traffic is the recording Records answers (none when nil).
	traffic []hostapi.Record
	// recordCalls adds every call to traffic, with its origin, as the host records it.
	recordCalls bool
}

type fakeCatalog struct {
	revision, availability string
	tools                  []wire.ToolEntry // sorted by id, with schemas
	run                    map[string]func(args jsontext.Value) (jsontext.Value, *wire.Error)
	artifacts              map[string]func() []hostapi.Artifact
	// hold lists tools whose calls run until the caller gives up, or release is closed.
	hold map[string]bool
	// release, when not nil, ends the held calls with their normal answer.
	release chan struct{}
	// gaveUp, when not nil, receives the tool id of every held call its caller gave up.
	gaveUp chan string
}

var _ hostapi.Backend = (*fakeBackend)(nil)

func newFakeBackend(t *testing.T) *fakeBackend {
	return &fakeBackend{catalogs: map[string]*fakeCatalog{}, dir: t.TempDir()}
}

// addSession adds a connected session with the given grant and tools.
func (f *fakeBackend) addSession(id, appID string, grant wire.Policy, tools []wire.ToolEntry) *fakeCatalog {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions = append(f.sessions, hostapi.Session{ID: id, AppID: appID, DeviceName: "test device", State: hostapi.StateConnected,
		MaxToolPolicy: grant, ConnectedAt: time.Date(2026, 1, 1, 0, 0, len(f.sessions), 0, time.UTC), ToolCount: len(tools)})
	slices.SortFunc(tools, func(a, b wire.ToolEntry) int { return cmpString(a.ID, b.ID) })
	c := &fakeCatalog{revision: "rev-1", availability: "avail-1", tools: tools,
		run: map[string]func(jsontext.Value) (jsontext.Value, *wire.Error){}, artifacts: map[string]func() []hostapi.Artifact{},
		hold: map[string]bool{}}
	f.catalogs[id] = c
	return c
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// setAvailable changes one tool's availability (a new availability revision).
func (f *fakeBackend) setAvailable(sessionID, toolID string, available bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.catalogs[sessionID]
	for i := range c.tools {
		if c.tools[i].ID == toolID {
			c.tools[i].Runtime = nil
			if !available {
				c.tools[i].Runtime = &wire.Runtime{Available: false, Code: "signed_out", Reason: "Sign in first.", RequiredState: "signedIn"}
			}
		}
	}
	c.availability += "+"
}

// disconnect marks a session disconnected.
func (f *fakeBackend) disconnect(sessionID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.sessions {
		if f.sessions[i].ID == sessionID {
			f.sessions[i].State = hostapi.StateDisconnected
		}
	}
}

func (f *fakeBackend) received() []hostapi.CallRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeBackend) Status(context.Context) (*hostapi.Status, error) {
	return &hostapi.Status{Schema: hostapi.SchemaStatus}, nil
}

func (f *fakeBackend) Sessions(context.Context) (*hostapi.Sessions, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &hostapi.Sessions{Schema: hostapi.SchemaSessions, Sessions: slices.Clone(f.sessions)}, nil
}

func (f *fakeBackend) Session(_ context.Context, id string) (*hostapi.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sessions {
		if s.ID == id {
			return &s, nil
		}
	}
	return nil, &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeSessionNotFound, Message: fmt.Sprintf("no session %q", id)}
}

// connectedCatalog returns the catalog of a connected session, like Local.client.
func (f *fakeBackend) connectedCatalog(id string) (*fakeCatalog, hostapi.Session, error) {
	for _, s := range f.sessions {
		if s.ID == id {
			if s.State != hostapi.StateConnected {
				return nil, s, &hostapi.APIError{Status: http.StatusConflict, Code: wire.CodeSessionClosed, Message: "session " + id + " is disconnected"}
			}
			return f.catalogs[id], s, nil
		}
	}
	return nil, hostapi.Session{}, &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeSessionNotFound, Message: fmt.Sprintf("no session %q", id)}
}

// annotated returns the catalog as the host sees it: denials for the grant and availability.
func (c *fakeCatalog) annotated(grant wire.Policy) []wire.ToolEntry {
	out := slices.Clone(c.tools)
	for i := range out {
		e := &out[i]
		switch {
		case !e.Policy.AllowedBy(grant):
			e.Denial = &wire.Denial{Code: wire.CodePolicyNotGranted, Reason: fmt.Sprintf("Tool policy '%s' exceeds the session grant '%s'.", e.Policy, grant)}
		case e.Runtime != nil && !e.Runtime.Available:
			e.Denial = &wire.Denial{Code: e.Runtime.Code, Reason: e.Runtime.Reason}
		}
		if e.Denial != nil {
			e.Executable = new(false)
		}
	}
	return out
}

func (f *fakeBackend) Tools(_ context.Context, sessionID string, req hostapi.ToolsRequest) (*hostapi.Tools, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, s, err := f.connectedCatalog(sessionID)
	if err != nil {
		return nil, err
	}
	out := &hostapi.Tools{Schema: hostapi.SchemaTools, SessionID: sessionID, Revision: c.revision,
		AvailabilityRevision: c.availability, TotalCount: len(c.tools)}
	if req.IfRevision != "" && req.IfRevision == c.revision {
		out.Unchanged, out.Tools = true, []wire.ToolEntry{}
		return out, nil
	}
	out.Tools = hostapi.FilterTools(c.annotated(s.MaxToolPolicy), req)
	if req.MaxResults > 0 && len(out.Tools) > req.MaxResults {
		out.Tools, out.Truncated = out.Tools[:req.MaxResults], true
	}
	if req.Detail != hostapi.DetailFull {
		for i := range out.Tools {
			out.Tools[i].ArgumentsSchema, out.Tools[i].ResultSchema, out.Tools[i].ArgumentEncoding = nil, nil, ""
		}
	}
	out.Count = len(out.Tools)
	return out, nil
}

func (f *fakeBackend) Tool(_ context.Context, sessionID, toolID string) (*hostapi.Tool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, s, err := f.connectedCatalog(sessionID)
	if err != nil {
		return nil, err
	}
	for _, e := range c.annotated(s.MaxToolPolicy) {
		if e.ID == toolID {
			return &hostapi.Tool{Schema: hostapi.SchemaTool, SessionID: sessionID, Revision: c.revision, Tool: e}, nil
		}
	}
	return nil, &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeNotFound, Message: fmt.Sprintf("tool %q is not in the catalog", toolID)}
}

// refuse is the host's refusal of a call, or nil.
func (c *fakeCatalog) refuse(grant wire.Policy, id string) *hostapi.ToolError {
	for _, e := range c.annotated(grant) {
		if e.ID != id {
			continue
		}
		if d := e.Denial; d != nil {
			kind := wire.KindUnavailable
			if d.Code == wire.CodePolicyNotGranted {
				kind = wire.KindDenied
			}
			te := &hostapi.ToolError{Error: wire.Error{Code: d.Code, Message: d.Reason}, Kind: kind, RefusedByHost: true}
			if rt := e.Runtime; rt != nil && !rt.Available { // as host/tools refuses: the runtime object as details
				te.Retryable = rt.Retryable
				te.Details, _ = wire.Marshal(rt)
			}
			return te
		}
		return nil
	}
	return &hostapi.ToolError{Error: wire.Error{Code: wire.CodeNotFound, Message: fmt.Sprintf("the last catalog does not list tool %q", id)},
		Kind: wire.KindUnavailable, RefusedByHost: true}
}

// run executes one call in the "app".
func (f *fakeBackend) run(c *fakeCatalog, req hostapi.CallRequest) (*wire.Result, *wire.Error, []hostapi.Artifact) {
	f.calls = append(f.calls, req)
	h := c.run[req.ToolID]
	if h == nil {
		return &wire.Result{ToolID: req.ToolID, Success: true, Result: jsontext.Value(`{"ok":true}`)}, nil, nil
	}
	res, werr := h(req.Arguments)
	if werr != nil {
		return nil, werr, nil
	}
	var arts []hostapi.Artifact
	if a := c.artifacts[req.ToolID]; a != nil {
		arts = a()
		for i := range arts { // every transfer has an id of its own
			arts[i].TransferID += fmt.Sprintf("-%d", len(f.calls))
		}
	}
	return &wire.Result{ToolID: req.ToolID, Success: true, Result: res}, nil, arts
}

// reportTransfers tells progress about each artifact as the host does: half of it, then all.
func reportTransfers(arts []hostapi.Artifact, progress func(hostapi.Progress)) {
	if progress == nil {
		return
	}
	for _, a := range arts {
		progress(hostapi.Progress{TransferID: a.TransferID, FileName: a.FileName, ReceivedBytes: a.SizeBytes / 2, SizeBytes: a.SizeBytes})
		progress(hostapi.Progress{TransferID: a.TransferID, FileName: a.FileName, ReceivedBytes: a.SizeBytes, SizeBytes: a.SizeBytes, Done: true})
	}
}

func (f *fakeBackend) Call(ctx context.Context, sessionID string, req hostapi.CallRequest, progress func(hostapi.Progress)) (*hostapi.Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, s, err := f.connectedCatalog(sessionID)
	if err != nil {
		return nil, err
	}
	if req.IfRevision != "" && req.IfRevision != c.revision || req.IfGrant != "" && req.IfGrant != s.MaxToolPolicy {
		return nil, &hostapi.APIError{Status: http.StatusPreconditionFailed, Code: wire.CodeSessionChanged, Message: "session " + sessionID + " changed"}
	}
	if c.hold[req.ToolID] {
		release, gaveUp := c.release, c.gaveUp
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			if gaveUp != nil {
				gaveUp <- req.ToolID
			}
			f.mu.Lock()
			return nil, ctx.Err()
		case <-release: // nil: never
			f.mu.Lock()
		}
	}
	out := &hostapi.Call{Schema: hostapi.SchemaCall, SessionID: sessionID, ToolID: req.ToolID, DurationMS: 3}
	if te := c.refuse(s.MaxToolPolicy, req.ToolID); te != nil {
		out.Error = te
		return out, nil
	}
	res, werr, arts := f.run(c, req)
	if werr != nil {
		out.Error = &hostapi.ToolError{Error: *werr, Kind: werr.Kind()}
		return out, nil
	}
	if f.recordCalls {
		f.recordCall(req, res)
	}
	reportTransfers(arts, progress)
	out.Success, out.Result, out.Artifacts = true, res, arts
	return out, nil
}

func (f *fakeBackend) Batch(_ context.Context, sessionID string, req hostapi.BatchRequest, progress func(hostapi.Progress)) (*hostapi.Batch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches++
	c, s, err := f.connectedCatalog(sessionID)
	if err != nil {
		return nil, err
	}
	out := &hostapi.Batch{Schema: hostapi.SchemaBatch, SessionID: sessionID, DurationMS: 5}
	for i, call := range req.Calls {
		if te := c.refuse(s.MaxToolPolicy, call.ToolID); te != nil {
			te.Details, _ = wire.Marshal(map[string]int{"index": i})
			out.Error = te
			return out, nil
		}
	}
	r := &wire.BatchResult{Success: true, Requested: len(req.Calls), Results: []wire.BatchItem{}}
	for i, call := range req.Calls {
		res, werr, arts := f.run(c, call)
		r.Completed++
		item := wire.BatchItem{Index: i, CallID: call.CallID, Outcome: wire.Outcome{ToolID: call.ToolID}}
		if werr != nil {
			item.Error, r.Success = werr, false
		} else {
			item.Success, item.Result = true, res.Result
			reportTransfers(arts, progress)
			out.Artifacts = append(out.Artifacts, arts...)
		}
		r.Results = append(r.Results, item)
		if werr != nil && !req.ContinueOnError {
			r.StoppedEarly = i < len(req.Calls)-1
			break
		}
	}
	out.Result, out.Success = r, r.Success
	return out, nil
}

func (f *fakeBackend) UI(ctx context.Context, sessionID string, req hostapi.UIRequest) (*hostapi.UIOperation, error) {
	return hostapi.RunUI(ctx, f, sessionID, req)
}

func (f *fakeBackend) IssueInvite(context.Context, hostapi.InviteRequest) (*hostapi.Invite, error) {
	return nil, &hostapi.APIError{Status: http.StatusNotImplemented, Code: wire.CodeInternal, Message: "not in the fake"}
}

func (f *fakeBackend) Invites(context.Context) (*hostapi.Invites, error) {
	return &hostapi.Invites{Schema: hostapi.SchemaInvites}, nil
}

func (f *fakeBackend) Revoke(context.Context, string) (*hostapi.Revocation, error) { return nil, nil }
func (f *fakeBackend) Forget(context.Context, string) (*hostapi.Forgetting, error) { return nil, nil }
func (f *fakeBackend) Rename(context.Context, string, hostapi.RenameRequest) (*hostapi.Renaming, error) {
	return nil, nil
}
func (f *fakeBackend) Crashes(context.Context, string) (*hostapi.Crashes, error) {
	return &hostapi.Crashes{Schema: hostapi.SchemaCrashes}, nil
}
func (f *fakeBackend) Annotations(context.Context, string) (*hostapi.Annotations, error) {
	return &hostapi.Annotations{Schema: hostapi.SchemaAnnotations}, nil
}

func (f *fakeBackend) Shutdown(context.Context) error { return nil }

func (f *fakeBackend) Disconnect(context.Context, string) (*hostapi.Disconnection, error) {
	return nil, fmt.Errorf("fake: no disconnect")
}

func (f *fakeBackend) Player(context.Context, bool) (*hostapi.PlayerAccess, error) {
	return nil, fmt.Errorf("fake: no player")
}

// tool builds a catalog entry with an object argument schema.
func tool(id, category string, policy wire.Policy, description string) wire.ToolEntry {
	return wire.ToolEntry{ID: id, Name: id, Description: description, Category: category, Policy: policy,
		ArgumentsSchema:    jsontext.Value(`{"type":"object","properties":{"text":{"type":"string","maxLength":100}}}`),
		ResultSchema:       jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
		DefinitionRevision: "def-" + id}
}

// demoTools is a small app: reads, writes, a critical tool, an unavailable tool and the
// screenshot tool.
func demoTools() []wire.ToolEntry {
	unavailable := tool("sync.push", "sync", wire.PolicyWrite, "Push local changes to the server.")
	unavailable.Runtime = &wire.Runtime{Available: false, Code: "signed_out", Reason: "Sign in first.", RequiredState: "signedIn", Remediation: "Call account.sign_in.", Retryable: true}
	get := tool("notes.get", "notes", wire.PolicyRead, "Get one note by id.\nMore text that the index does not show.")
	get.PrerequisiteToolIDs = []string{"notes.list"}
	create := tool("notes.create", "notes", wire.PolicyWrite, "Create a note.")
	create.Keywords = "note add " + catalog.HintAdditive
	return []wire.ToolEntry{
		tool("notes.list", "notes", wire.PolicyRead, "List the notes."),
		get,
		create,
		tool("notes.delete_all", "notes", wire.PolicyCritical, "Delete every note."),
		unavailable,
		{ID: wire.ScreenshotToolID, Name: "Get screenshot", Description: "Capture the screen.", Category: "ui", Policy: wire.PolicyRead,
			ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"format":{"enum":["png","jpeg"]},"maxWidth":{"type":"integer"}}}`)},
	}
}

// writePNG writes a w×h PNG into dir and returns its path.
func writePNG(t testing.TB, dir string, w, h int) string {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("shot-%dx%d.png", w, h))
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// withScreenshot makes the fake's ui.get_screenshot return a w×h PNG.
func (f *fakeBackend) withScreenshot(t testing.TB, c *fakeCatalog, w, h int) string {
	p := writePNG(t, f.dir, w, h)
	c.run[wire.ScreenshotToolID] = func(jsontext.Value) (jsontext.Value, *wire.Error) {
		return jsontext.Value(fmt.Sprintf(`{"format":"png","width":%d,"height":%d,"capturedAtUtc":"2026-01-02T03:04:05Z","artifactPath":%q}`, w, h, p)), nil
	}
	c.artifacts[wire.ScreenshotToolID] = func() []hostapi.Artifact { return []hostapi.Artifact{pngArtifact(p)} }
	return p
}

// pngArtifact is the host's record of the PNG file at p, received whole.
func pngArtifact(p string) hostapi.Artifact {
	st, _ := os.Stat(p)
	return hostapi.Artifact{TransferID: "t-" + filepath.Base(p), Path: p, FileName: filepath.Base(p), MimeType: "image/png", SizeBytes: st.Size(), Status: "complete"}
}

// recordCall adds a call that succeeded to the traffic, as the host's recording holds it.
func (f *fakeBackend) recordCall(req hostapi.CallRequest, res *wire.Result) {
	id := fmt.Sprint(len(f.traffic))
	args := req.Arguments
	if len(args) == 0 {
		args = jsontext.Value(`{}`)
	}
	origin, _ := jsontext.AppendQuote(nil, req.Origin)
	tool, _ := jsontext.AppendQuote(nil, req.ToolID)
	f.traffic = append(f.traffic,
		hostapi.Record{Kind: hostapi.RecordTraffic, Data: jsontext.Value(`{"direction":"request","type":"tool.call","requestId":"` + id +
			`","origin":` + string(origin) + `,"outcome":"ok","payload":{"toolId":` + string(tool) + `,"arguments":` + string(args) + `}}`)},
		hostapi.Record{Kind: hostapi.RecordTraffic, Data: jsontext.Value(`{"direction":"response","type":"tool.result","requestId":"` + id +
			`","outcome":"ok","payload":{"toolId":` + string(tool) + `,"success":true,"result":` + string(res.Result) + `}}`)})
}

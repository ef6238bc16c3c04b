package control

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/fanout"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire"
)

// Backend is the hostapi.Backend of a host running in this process: a *host.Server and,
// when it records, its recorder.
type Backend struct {
	srv       *host.Server
	rec       *recording.Recorder // nil when the host records nothing
	version   string
	stateDir  string
	archive   string // Options.Archive
	startedAt time.Time
	shutdown  func()
	player    atomic.Pointer[PlayerAccessor]
	// renamed reports renames to Events beside the server's changes: a label is the
	// recorder's, which the server does not see.
	renamed fanout.Hub[hostapi.Event]
}

var _ hostapi.Backend = (*Backend)(nil)

// PlayerAccessor is what the control API needs of a web player (Backend.SetPlayer).
type PlayerAccessor interface {
	// PlayerAddress is the player's URL without its token.
	PlayerAddress() string
	// PlayerURL is the URL that opens the player, with its access token; renew makes a
	// new token first.
	PlayerURL(renew bool) (string, error)
}

// SetPlayer makes Status show the player and Player answer; the player starts after the
// backend it sits on, so it is set afterwards.
func (l *Backend) SetPlayer(p PlayerAccessor) { l.player.Store(&p) }

// Options configures a Backend.
type Options struct {
	// Version is reported by Status.
	Version string
	// StateDir is reported by Status.
	StateDir string
	// Shutdown is called (once, asynchronously) when a client asks the host to stop.
	Shutdown func()
	// Recorder keeps the host's session recordings (host.Options.Recorder); nil when it
	// records nothing.
	Recorder *recording.Recorder
	// Archive names the archive an offline Backend shows (NewOffline over
	// recording.OpenArchive), so that what needs a live app says why it is not there.
	Archive string
}

// New returns the control API of srv, a host running in this process.
func New(srv *host.Server, opts Options) *Backend {
	return &Backend{srv: srv, rec: opts.Recorder, version: opts.Version, stateDir: opts.StateDir, startedAt: time.Now(), shutdown: opts.Shutdown}
}

// withProgress makes the call made with ctx report its own transfers' progress to f.
func withProgress(ctx context.Context, f func(hostapi.Progress)) context.Context {
	if f == nil {
		return ctx
	}
	return tools.WithProgress(ctx, func(p tools.TransferProgress) {
		f(hostapi.Progress{TransferID: p.TransferID, FileName: p.FileName, ReceivedBytes: p.ReceivedBytes, SizeBytes: p.SizeBytes,
			Done: p.Status != tools.StatusReceiving})
	})
}

// Status implements hostapi.Backend.
func (l *Backend) Status(context.Context) (*hostapi.Status, error) {
	if l.srv == nil { // offline: the recordings only
		st := &hostapi.Status{Schema: hostapi.SchemaStatus, Version: l.version, StateDir: l.stateDir, Archive: l.archive}
		if l.rec != nil {
			u := hostapi.RecordingUsage(l.rec.Usage())
			st.Recording = &u
		}
		return st, nil
	}
	n := 0
	for _, s := range l.srv.Sessions() {
		if s.State() == host.StateConnected {
			n++
		}
	}
	st := &hostapi.Status{
		Schema: hostapi.SchemaStatus, Version: l.version, PID: os.Getpid(), StartedAt: l.startedAt,
		Discovery: l.srv.DiscoveryAddr().String(), WebSocket: l.srv.WebSocketAddr().String(),
		LAN: !l.srv.DiscoveryAddr().Addr().IsLoopback(), StateDir: l.stateDir, Sessions: n, FileLimit: hostapi.FileLimit(l.srv.FileLimit()),
		DualStack: host.DualStack(l.srv.DiscoveryAddr()) && host.DualStack(l.srv.WebSocketAddr()),
	}
	if r := l.srv.WebSocketPorts(); !r.IsZero() {
		st.WebSocketPorts = r.String()
	}
	if l.rec != nil {
		u := hostapi.RecordingUsage(l.rec.Usage())
		st.Recording = &u
	}
	if p := l.player.Load(); p != nil {
		st.Player = (*p).PlayerAddress()
	}
	return st, nil
}

// Player implements hostapi.Backend.
func (l *Backend) Player(_ context.Context, renew bool) (*hostapi.PlayerAccess, error) {
	p := l.player.Load()
	if p == nil {
		return nil, hostapi.Errorf(http.StatusNotFound, wire.CodePlayerOff, "this host serves no web player (it runs with --no-player)")
	}
	u, err := (*p).PlayerURL(renew)
	if err != nil {
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "player: %v", err)
	}
	return &hostapi.PlayerAccess{Schema: hostapi.SchemaPlayer, Address: (*p).PlayerAddress(), URL: u, Renewed: renew}, nil
}

// Disconnect implements hostapi.Backend.
func (l *Backend) Disconnect(_ context.Context, id string) (*hostapi.Disconnection, error) {
	if l.srv == nil {
		return nil, l.noHost()
	}
	s, ok := l.srv.Session(id)
	if !ok {
		return nil, hostapi.SessionNotFound(id)
	}
	out := &hostapi.Disconnection{Schema: hostapi.SchemaDisconnect, SessionID: id, Disconnected: s.State() == host.StateConnected}
	s.Disconnect()
	return out, nil
}

// Sessions implements hostapi.Backend.
func (l *Backend) Sessions(ctx context.Context) (*hostapi.Sessions, error) {
	if l.srv == nil {
		return &hostapi.Sessions{Schema: hostapi.SchemaSessions, Sessions: []hostapi.Session{}}, nil // none is connected
	}
	list := l.srv.Sessions()
	labels, err := l.labels(ctx)
	if err != nil {
		return nil, err
	}
	out := &hostapi.Sessions{Schema: hostapi.SchemaSessions, Sessions: make([]hostapi.Session, 0, len(list))}
	for _, s := range list {
		v := sessionOf(s)
		v.Label = labels[v.ID]
		out.Sessions = append(out.Sessions, v)
	}
	return out, nil
}

// labels are the sessions' labels (Rename): none when the host records nothing.
func (l *Backend) labels(ctx context.Context) (map[string]string, error) {
	if l.rec == nil {
		return nil, nil
	}
	labels, err := l.rec.Labels(ctx)
	if err != nil {
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
	}
	return labels, nil
}

// Rename implements hostapi.Backend: the label is kept with the session's recording.
func (l *Backend) Rename(ctx context.Context, id string, req hostapi.RenameRequest) (*hostapi.Renaming, error) {
	label, err := hostapi.CheckLabel(req.Label)
	if err != nil {
		return nil, err
	}
	if err := l.recorded(id); err != nil {
		return nil, err
	}
	l.flush(ctx) // a session just connected has its recording written first
	if err := l.rec.Rename(ctx, id, label); err != nil {
		if errors.Is(err, recording.ErrReadOnly) {
			return nil, l.noHost()
		}
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
	}
	l.renamed.Publish(hostapi.Event{Kind: hostapi.EventUpdated, SessionID: id})
	return &hostapi.Renaming{Schema: hostapi.SchemaRename, SessionID: id, Label: label}, nil
}

// Session implements hostapi.Backend: a session of the registry, else the last description of a
// recorded one.
func (l *Backend) Session(ctx context.Context, id string) (*hostapi.Session, error) {
	var sum *recording.Summary
	if l.rec != nil {
		if v, err := l.rec.Session(ctx, id); err == nil {
			sum = &v
		}
	}
	var v hostapi.Session
	if s, ok := l.live(id); ok {
		v = sessionOf(s)
	} else if sum != nil {
		v = sessionOfInfo(recordedInfo(*sum))
	} else {
		return nil, hostapi.SessionNotFound(id)
	}
	if sum != nil {
		v.Recording, v.Label = recordingOf(*sum), sum.Label
	}
	return &v, nil
}

// Crashes implements hostapi.Backend.
func (l *Backend) Crashes(ctx context.Context, id string) (*hostapi.Crashes, error) {
	if l.srv == nil {
		return l.offlineCrashes(ctx, id)
	}
	list, err := records(l.srv, id, l.srv.Crashes)
	if wire.CodeOf(err) == wire.CodeSessionNotFound && l.recorded(id) == nil {
		return l.offlineCrashes(ctx, id) // an imported recording: its records hold them
	}
	if err != nil {
		return nil, err
	}
	return &hostapi.Crashes{Schema: hostapi.SchemaCrashes, SessionID: id, Crashes: crashesOf(list)}, nil
}

// Annotations implements hostapi.Backend.
func (l *Backend) Annotations(ctx context.Context, id string) (*hostapi.Annotations, error) {
	if l.srv == nil {
		return l.offlineAnnotations(ctx, id)
	}
	list, err := records(l.srv, id, l.srv.Annotations)
	if wire.CodeOf(err) == wire.CodeSessionNotFound && l.recorded(id) == nil {
		return l.offlineAnnotations(ctx, id) // an imported recording: its records hold them
	}
	if err != nil {
		return nil, err
	}
	return &hostapi.Annotations{Schema: hostapi.SchemaAnnotations, SessionID: id, Annotations: annotationsOf(list)}, nil
}

// records lists a session's records with list; a session the host does not know and
// whose directory holds nothing is not found.
func records[T any](srv *host.Server, id string, list func(string) ([]T, error)) ([]T, error) {
	_, known := srv.Session(id)
	out, err := list(id)
	switch {
	case err != nil && !known:
		return nil, hostapi.SessionNotFound(id)
	case err != nil:
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
	case len(out) == 0 && !known:
		return nil, hostapi.SessionNotFound(id)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

func sessionOf(s *host.Session) hostapi.Session {
	v := sessionOfInfo(s.Info())
	if c := s.Tools(); c != nil {
		if cat := c.Cached(); cat != nil {
			v.Revision, v.AvailabilityRevision, v.ToolCount = cat.Revision, cat.AvailabilityRevision, len(cat.Tools)
		}
	}
	return v
}

// sessionOfInfo describes a session from what the host says of it.
func sessionOfInfo(in host.SessionInfo) hostapi.Session {
	v := hostapi.Session{
		ID: in.ID, AppID: in.AppID, DeviceID: in.DeviceID, DeviceName: in.DeviceName, Platform: in.Platform,
		State: string(in.State), AppState: in.AppState, MaxToolPolicy: in.MaxToolPolicy,
		ConnectedAt: in.ConnectedAt, DisconnectedAt: in.DisconnectedAt,
		CrashReports: in.CrashReports, Annotations: in.Annotations,
	}
	if p := in.Profile; p != nil {
		v.AppName, v.AppVersion = p.App.AppName, p.App.VersionName
		v.SDK = strings.TrimSpace(p.SDK.Name + " " + p.SDK.Version)
		if p.Device.OSVersion != "" {
			v.Platform = strings.TrimSpace(v.Platform + " " + p.Device.OSVersion)
		}
	}
	return v
}

// recordedInfo is a recording's last description of its session: the host's SessionInfo as
// recorded (an imported archive's may hold anything: what does not read is left out),
// completed from the summary. A session that is not in the registry is not connected.
func recordedInfo(sum recording.Summary) host.SessionInfo {
	var in host.SessionInfo
	if len(sum.Info) > 0 {
		json.Unmarshal(sum.Info, &in) // best effort, as said
	}
	in.ID = sum.ID
	if in.AppID == "" {
		in.AppID = sum.AppID
	}
	if in.DeviceID == "" {
		in.DeviceID = sum.DeviceID
	}
	if in.DeviceName == "" {
		in.DeviceName = sum.DeviceName
	}
	if in.ConnectedAt.IsZero() {
		in.ConnectedAt = sum.FirstAt
	}
	if in.DisconnectedAt.IsZero() {
		in.DisconnectedAt = sum.LastAt
	}
	if in.MaxToolPolicy == "" {
		in.MaxToolPolicy = wire.PolicyRead // an imported archive's session granted nothing we know of
	}
	in.State = host.StateDisconnected
	return in
}

func recordingOf(sum recording.Summary) *hostapi.Recording {
	return &hostapi.Recording{Origin: sum.Origin, FirstAt: sum.FirstAt, LastAt: sum.LastAt, Records: sum.Records, Bytes: sum.Bytes,
		Dropped: sum.Dropped, Evicted: sum.Evicted}
}

// Recordings implements hostapi.Backend.
func (l *Backend) Recordings(ctx context.Context) (*hostapi.Sessions, error) {
	out := &hostapi.Sessions{Schema: hostapi.SchemaRecordings, Sessions: []hostapi.Session{}}
	if l.rec == nil {
		return out, nil
	}
	list, err := l.rec.Sessions(ctx)
	if err != nil {
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
	}
	for _, sum := range list {
		var v hostapi.Session
		if s, ok := l.live(sum.ID); ok {
			v = sessionOf(s)
		} else {
			v = sessionOfInfo(recordedInfo(sum))
		}
		v.Recording, v.Label = recordingOf(sum), sum.Label
		out.Sessions = append(out.Sessions, v)
	}
	return out, nil
}

// recorded checks that the host records and that it knows session id (connected, or
// recorded).
func (l *Backend) recorded(id string) error {
	if l.rec == nil {
		return hostapi.ErrRecordingOff
	}
	if _, ok := l.live(id); !ok && !l.rec.Recorded(id) {
		return hostapi.SessionNotFound(id)
	}
	return nil
}

// query turns a request into the recorder's query.
func query(id string, req hostapi.RecordsRequest) (recording.Query, error) {
	q := recording.Query{Session: id, Kinds: kindsOf(req.Kinds), Since: req.Since, Until: req.Until, Search: req.Search,
		Channel: req.Channel, After: req.After, Newest: req.Newest, Limit: req.Limit}
	for _, k := range req.Kinds {
		if !recording.Kind(k).Valid() {
			return q, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "unknown record kind %q (kinds: %s)", k, kindList())
		}
	}
	level, ok := recording.ParseLevel(req.Level)
	if !ok {
		return q, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "unknown log level %q (debug, info, warn, error)", req.Level)
	}
	q.Level = level
	if req.Limit < 0 {
		return q, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "limit must not be negative")
	}
	return q, nil
}

func kindList() string {
	names := make([]string, len(recording.Kinds))
	for i, k := range recording.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Records implements hostapi.Backend.
func (l *Backend) Records(ctx context.Context, id string, req hostapi.RecordsRequest) (*hostapi.Records, error) {
	if err := l.recorded(id); err != nil {
		return nil, err
	}
	q, err := query(id, req)
	if err != nil {
		return nil, err
	}
	l.flush(ctx)
	p, err := l.rec.Records(ctx, q)
	if err != nil {
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
	}
	return &hostapi.Records{Schema: hostapi.SchemaRecords, SessionID: id, Records: recordsOf(p.Records), Next: p.Next}, nil
}

// maxFlushWait bounds how long a query waits for the recorder to write what the host
// received before it (a writer far behind, under heavy load, answers with what it wrote).
const maxFlushWait = time.Second

// flush lets a query see what the host received before it.
func (l *Backend) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, maxFlushWait)
	defer cancel()
	l.rec.Flush(ctx)
}

// Follow implements hostapi.Backend.
func (l *Backend) Follow(ctx context.Context, id string, req hostapi.RecordsRequest, fn func(hostapi.Record) error) error {
	if err := l.recorded(id); err != nil {
		return err
	}
	q, err := query(id, req)
	if err != nil {
		return err
	}
	err = l.rec.Follow(ctx, q, func(r recording.Record) error { return fn(recordOf(r)) })
	if errors.Is(err, recording.ErrClosed) {
		return hostapi.Errorf(http.StatusServiceUnavailable, wire.CodeSessionClosed, "the host stopped recording (it is shutting down)")
	}
	return err
}

// Blob implements hostapi.Backend.
func (l *Backend) Blob(ctx context.Context, id string, seq int64) (*hostapi.Blob, error) {
	if err := l.recorded(id); err != nil {
		return nil, err
	}
	rec, err := l.rec.Record(ctx, seq)
	if err != nil || rec.Session != id || rec.Blob == "" {
		return nil, hostapi.Errorf(http.StatusNotFound, wire.CodeResourceNotFound, "session %s has no file for record %d (evicted, or never kept)", id, seq)
	}
	f, err := l.rec.OpenBlob(rec)
	if err != nil {
		return nil, hostapi.Errorf(http.StatusNotFound, wire.CodeResourceNotFound, "record %d: %v", seq, err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "record %d: %v", seq, err)
	}
	name := path.Base(rec.Blob)
	return &hostapi.Blob{Name: name, MimeType: blobMimeType(name), SizeBytes: size, Body: f}, nil
}

// blobMimeType names the media type of a record's file by its extension.
func blobMimeType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Export implements hostapi.Backend.
func (l *Backend) Export(ctx context.Context, id string, req hostapi.ExportRequest, w io.Writer) error {
	if l.rec == nil {
		return hostapi.ErrRecordingOff
	}
	if !l.rec.Recorded(id) {
		return hostapi.SessionNotFound(id)
	}
	if err := l.rec.Flush(ctx); err != nil { // what the session sent until now is in it
		return err
	}
	err := l.rec.Export(ctx, id, w, recording.ExportOptions{Redact: redactNames(req.Redact), Producer: "ansight " + l.version,
		Format: req.Format, Sanitize: req.Sanitize})
	if errors.Is(err, recording.ErrNotFound) {
		return hostapi.SessionNotFound(id)
	}
	return err
}

// DeleteRecording implements hostapi.Backend.
func (l *Backend) DeleteRecording(ctx context.Context, id string) error {
	if l.rec == nil {
		return hostapi.ErrRecordingOff
	}
	if err := l.rec.Flush(ctx); err != nil { // nothing queued for it comes back after
		return err
	}
	err := l.rec.Delete(ctx, id)
	if errors.Is(err, recording.ErrNotFound) {
		return hostapi.SessionNotFound(id)
	}
	return l.readOnly(err)
}

// redactNames expands an export's redaction list: "default" stands for
// recording.DefaultRedact.
func redactNames(list []string) []string {
	var out []string
	for _, n := range list {
		if n = strings.TrimSpace(n); strings.EqualFold(n, "default") {
			out = append(out, recording.DefaultRedact...)
		} else if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Import implements hostapi.Backend: the archive is spooled to a private file beside the
// recordings (a zip is read from its end), bounded by the recordings' budget.
func (l *Backend) Import(ctx context.Context, req hostapi.ImportRequest, archive io.Reader) (*hostapi.Session, error) {
	if l.rec == nil {
		return nil, hostapi.ErrRecordingOff
	}
	f, err := os.CreateTemp(l.rec.Dir(), "upload-*.zip")
	if err != nil {
		return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	max := l.rec.Usage().MaxBytes
	n, err := io.Copy(f, io.LimitReader(archive, max+1))
	if err != nil {
		return nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "read the archive: %v", err)
	}
	if n > max {
		return nil, hostapi.Errorf(http.StatusRequestEntityTooLarge, wire.CodeBadRequest, "the archive is larger than the recordings' budget (%d bytes)", max)
	}
	sum, err := l.rec.Import(ctx, f, n, recording.ImportOptions{Password: req.Password})
	var pe *recording.PasswordError
	switch {
	case errors.As(err, &pe) && pe.Reason == recording.ReasonPasswordRequired:
		return nil, hostapi.Errorf(http.StatusUnauthorized, wire.CodePasswordRequired, "%s", pe.Error())
	case errors.As(err, &pe):
		return nil, hostapi.Errorf(http.StatusUnauthorized, wire.CodePasswordInvalid, "%s", pe.Error())
	case errors.Is(err, recording.ErrReadOnly):
		return nil, l.noHost()
	case err != nil:
		return nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "%v", err)
	}
	v := sessionOfInfo(recordedInfo(sum))
	v.Recording, v.Label = recordingOf(sum), sum.Label // the archive's label, when it carried a good one
	if r := sum.Import; r != nil {
		v.Import = &hostapi.ImportReport{Format: r.Format, Schema: r.Schema, Skipped: r.Skipped}
	}
	return &v, nil
}

// client returns the tool client of a connected session.
func (l *Backend) client(id string) (*tools.Client, error) {
	if l.srv == nil {
		return nil, l.noHost()
	}
	s, ok := l.srv.Session(id)
	if !ok {
		return nil, hostapi.SessionNotFound(id)
	}
	if s.State() != host.StateConnected {
		return nil, hostapi.Errorf(http.StatusConflict, wire.CodeSessionClosed, "session %s is disconnected", id)
	}
	return s.Tools(), nil
}

// Tools implements hostapi.Backend.
func (l *Backend) Tools(ctx context.Context, sessionID string, req hostapi.ToolsRequest) (*hostapi.Tools, error) {
	c, err := l.client(sessionID)
	if err != nil {
		return nil, err
	}
	var cat *tools.Catalog
	// A search looks into the schemas too, so it needs the definitions (fetched once, then
	// cached by definitionRevision).
	if req.Detail == hostapi.DetailFull || req.Query != "" || req.Feature != "" {
		cat, err = c.Catalog(ctx)
	} else {
		cat, err = c.Index(ctx)
	}
	if err != nil {
		return nil, hostError(err)
	}
	out := &hostapi.Tools{Schema: hostapi.SchemaTools, SessionID: sessionID, Revision: cat.Revision, AvailabilityRevision: cat.AvailabilityRevision,
		TotalCount: len(cat.Tools), Categories: cat.Categories}
	if req.IfRevision != "" && req.IfRevision == cat.Revision {
		out.Unchanged = true
		out.Tools = []wire.ToolEntry{}
		return out, nil
	}
	out.Tools = hostapi.FilterTools(cat.Tools, req)
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

// Tool implements hostapi.Backend.
func (l *Backend) Tool(ctx context.Context, sessionID, toolID string) (*hostapi.Tool, error) {
	c, err := l.client(sessionID)
	if err != nil {
		return nil, err
	}
	e, err := c.Describe(ctx, toolID)
	if err != nil {
		if wire.CodeOf(err) == wire.CodeNotFound {
			return nil, hostapi.Errorf(http.StatusNotFound, wire.CodeNotFound, "%s", err.Error())
		}
		return nil, hostError(err)
	}
	rev := ""
	if cat := c.Cached(); cat != nil {
		rev = cat.Revision
	}
	return &hostapi.Tool{Schema: hostapi.SchemaTool, SessionID: sessionID, Revision: rev, Tool: *e}, nil
}

// Call implements hostapi.Backend.
func (l *Backend) Call(ctx context.Context, sessionID string, req hostapi.CallRequest, progress func(hostapi.Progress)) (*hostapi.Call, error) {
	c, err := l.client(sessionID)
	if err != nil {
		return nil, err
	}
	if req.IfRevision != "" || req.IfGrant != "" {
		if err := l.unchanged(sessionID, c, req.IfRevision, req.IfGrant); err != nil {
			return nil, err
		}
	}
	if err := hostapi.CheckOrigin(req.Origin); err != nil {
		return nil, err
	}
	ctx, cancel, err := withAnswerTimeout(ctx, req.TimeoutMS)
	if err != nil {
		return nil, err
	}
	defer cancel()
	start := time.Now()
	res, err := c.Call(withProgress(tools.WithOrigin(ctx, req.Origin), progress), wireCall(req))
	out := &hostapi.Call{Schema: hostapi.SchemaCall, SessionID: sessionID, ToolID: req.ToolID, DurationMS: time.Since(start).Milliseconds()}
	if te := toolError(err); te != nil {
		out.Error = te
		return out, nil
	}
	if err != nil {
		return nil, hostError(err)
	}
	out.Success = true
	out.Result = &res.Payload
	out.Artifacts = artifactsOf(res.Artifacts)
	return out, nil
}

// unchanged checks a conditional call's condition (hostapi.CallRequest.IfRevision): the
// session's catalog revision and grant are the ones the caller judged the call by. It is
// checked just before the call is sent, as the tool client checks the catalog and grant
// themselves.
func (l *Backend) unchanged(sessionID string, c *tools.Client, revision string, grant wire.Policy) error {
	rev := ""
	if cat := c.Cached(); cat != nil {
		rev = cat.Revision
	}
	var have wire.Policy
	if s, ok := l.srv.Session(sessionID); ok {
		have = s.MaxToolPolicy()
	}
	if revision != "" && revision != rev || grant != "" && grant != have {
		return hostapi.Errorf(http.StatusPreconditionFailed, wire.CodeSessionChanged,
			"session %s changed: catalog revision %s and grant %s, the call named %s and %s",
			sessionID, cmp.Or(rev, "(none)"), cmp.Or(string(have), "(none)"), cmp.Or(revision, "any"), cmp.Or(string(grant), "any"))
	}
	return nil
}

// UI implements hostapi.Backend: the operation over this host's calls.
func (l *Backend) UI(ctx context.Context, sessionID string, req hostapi.UIRequest) (*hostapi.UIOperation, error) {
	start := time.Now()
	out, err := hostapi.RunUI(ctx, l, sessionID, req)
	if err == nil && l.rec != nil && hostapi.RecordsUIOperation(req.Operation) {
		l.recordUI(sessionID, start, req, out)
	}
	return out, err
}

// uiOperations numbers the recorded UI operations, for their request ids.
var uiOperations atomic.Int64

// recordUI records an assert or a wait in the session's traffic (type ui.operation, the
// request as its payload): the captures it made are recorded as calls, but say nothing of
// what it checked, which 'ansight test record' turns into the flow's assert and wait steps.
// Actions need no record of their own: their ui.perform_action calls are recorded.
func (l *Backend) recordUI(sessionID string, start time.Time, req hostapi.UIRequest, out *hostapi.UIOperation) {
	payload, err := json.Marshal(req.Request)
	if err != nil {
		return
	}
	ev := wire.TrafficEvent{SessionID: sessionID, At: start, Kind: wire.TrafficRequest, Type: hostapi.TrafficUIOperation,
		RequestID: fmt.Sprintf("ui-%d", uiOperations.Add(1)), Origin: req.Origin, Outcome: wire.TrafficOK,
		Duration: time.Since(start), Payload: payload, PayloadBytes: len(payload)}
	if !out.Succeeded {
		ev.Outcome, ev.ErrorCode = wire.TrafficError, string(out.Code)
	}
	l.rec.RecordTraffic(ev)
}

// Batch implements hostapi.Backend.
func (l *Backend) Batch(ctx context.Context, sessionID string, req hostapi.BatchRequest, progress func(hostapi.Progress)) (*hostapi.Batch, error) {
	c, err := l.client(sessionID)
	if err != nil {
		return nil, err
	}
	calls := make([]wire.Call, len(req.Calls))
	for i, r := range req.Calls {
		if r.TimeoutMS != 0 {
			return nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "call %d of the batch has timeoutMs: give the batch's timeoutMs instead", i)
		}
		if r.Origin != "" {
			return nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "call %d of the batch has an origin: give the batch's origin instead", i)
		}
		if r.IfRevision != "" || r.IfGrant != "" {
			return nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "call %d of the batch is conditional (ifRevision, ifGrant): a batch's calls cannot be", i)
		}
		calls[i] = wireCall(r)
	}
	ctx, cancel, err := withAnswerTimeout(ctx, req.TimeoutMS)
	if err != nil {
		return nil, err
	}
	defer cancel()
	start := time.Now()
	if err := hostapi.CheckOrigin(req.Origin); err != nil {
		return nil, err
	}
	res, err := c.Batch(withProgress(tools.WithOrigin(ctx, req.Origin), progress), req.ContinueOnError, calls)
	out := &hostapi.Batch{Schema: hostapi.SchemaBatch, SessionID: sessionID, DurationMS: time.Since(start).Milliseconds()}
	if te := toolError(err); te != nil {
		out.Error = te
		return out, nil
	}
	if err != nil {
		return nil, hostError(err)
	}
	out.Result = &res.Payload
	out.Success = res.Payload.Success
	out.Artifacts = artifactsOf(res.Artifacts)
	out.Refused = res.Refused
	return out, nil
}

// withAnswerTimeout gives ctx the caller's limit a request's timeoutMs asks for: the tool
// client waits for the app's answer and its files that long rather than the limit it
// derives from the call (tools.WithTimeout).
func withAnswerTimeout(ctx context.Context, ms int64) (context.Context, context.CancelFunc, error) {
	switch {
	case ms == 0:
		return ctx, func() {}, nil
	case ms < 0 || ms > hostapi.MaxTimeoutMS:
		return nil, nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "timeoutMs must be between 1 and %d", hostapi.MaxTimeoutMS)
	}
	ctx, cancel := tools.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
	return ctx, cancel, nil
}

// wireCall is the tool call r asks for.
func wireCall(r hostapi.CallRequest) wire.Call {
	return wire.Call{ToolID: r.ToolID, Arguments: r.Arguments, CallID: r.CallID, After: r.After}
}

func artifactsOf(list []tools.Artifact) []hostapi.Artifact {
	out := make([]hostapi.Artifact, 0, len(list))
	for _, a := range list {
		v := hostapi.Artifact{TransferID: a.TransferID, Path: a.Path, FileName: a.FileName, MimeType: a.MimeType, SizeBytes: a.SizeBytes, Status: tools.StatusComplete}
		if a.Err != nil {
			v.Status, v.Error, v.Path = tools.StatusFailed, a.Err.Error(), ""
		}
		out = append(out, v)
	}
	return out
}

// toolError turns a tool's error or a host refusal into data; other errors give nil.
func toolError(err error) *hostapi.ToolError {
	var we *wire.Error
	if !errors.As(err, &we) {
		return nil
	}
	te := &hostapi.ToolError{Error: *we, Kind: we.Kind()}
	if refusal, refused := errors.AsType[*tools.RefusalError](err); refused {
		te.RefusedByHost = true
		if refusal.Index >= 0 {
			te.Index, te.ToolID = &refusal.Index, refusal.ToolID
		}
		if te.Kind == wire.KindFailed {
			// The tool did not run: what the host refuses is never the tool's failure. (Every
			// refusal has a code of its own kind, or an unavailable tool's runtime details.)
			te.Kind = wire.KindUnavailable
		}
	}
	return te
}

// hostError maps a tool client's transport failure to an *APIError.
func hostError(err error) error {
	var te *tools.TransportError
	if errors.As(err, &te) {
		switch {
		case errors.Is(err, tools.ErrTimeout), errors.Is(err, context.DeadlineExceeded): // timeoutMs
			return hostapi.Errorf(http.StatusGatewayTimeout, wire.CodeTimeout, "%v", err)
		case errors.Is(err, tools.ErrProtocol):
			return hostapi.Errorf(http.StatusBadGateway, wire.CodeProtocol, "%v", err)
		case errors.Is(err, context.Canceled):
			return err
		}
		return hostapi.Errorf(http.StatusConflict, wire.CodeSessionClosed, "%v", err)
	}
	return err
}

// IssueInvite implements hostapi.Backend.
func (l *Backend) IssueInvite(_ context.Context, req hostapi.InviteRequest) (*hostapi.Invite, error) {
	app := req.AppID
	if app == "" {
		app = pairing.AnyApp
	}
	if l.srv == nil {
		return nil, l.noHost()
	}
	if err := checkHostAddresses(req.HostAddresses); err != nil {
		return nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "%v", err)
	}
	inv, code, err := l.srv.IssueInvite(host.InviteOptions{AppID: app, AppName: req.AppName, Duration: time.Duration(req.DurationSeconds) * time.Second,
		MaxToolPolicy: req.MaxToolPolicy, HostAddresses: req.HostAddresses})
	if err != nil {
		return nil, hostapi.Errorf(http.StatusBadRequest, wire.CodeBadRequest, "%v", err)
	}
	v := inviteOf(inv, time.Now())
	v.Schema = hostapi.SchemaInvite
	v.Code = code
	if d := inv.Document; d != nil && d.Discovery != nil {
		v.HostAddresses = d.Discovery.HostAddresses
	}
	return &v, nil
}

// checkHostAddresses accepts IP addresses and host names, a few of them.
func checkHostAddresses(list []string) error {
	if len(list) > hostapi.MaxHostAddresses {
		return fmt.Errorf("at most %d host addresses, not %d", hostapi.MaxHostAddresses, len(list))
	}
	for _, a := range list {
		if _, err := netip.ParseAddr(a); err == nil {
			continue
		}
		if !validHostName(a) {
			return fmt.Errorf("host address %q is neither an IP address nor a host name", a)
		}
	}
	return nil
}

// validHostName reports whether s is a DNS name: dot-separated labels of letters, digits
// and inner hyphens, 253 bytes at most.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func inviteOf(inv host.Invite, now time.Time) hostapi.Invite {
	v := hostapi.Invite{ID: inv.ID, AppID: inv.AppID, AppName: inv.AppName, MaxToolPolicy: inv.MaxToolPolicy, IssuedAt: inv.IssuedAt,
		ExpiresAt: inv.ExpiresAt, GrantExpiresAt: inv.GrantExpiresAt, Uses: inv.Uses, MaxUses: inv.MaxUses, RevokedAt: inv.RevokedAt, State: "open"}
	if v.AppID == pairing.AnyApp {
		v.AppID = ""
	}
	switch {
	case !inv.RevokedAt.IsZero():
		v.State = "revoked"
	case inv.MaxUses > 0 && inv.Uses >= inv.MaxUses:
		v.State = "used"
	case now.After(inv.ExpiresAt): // as the host decides (host/authorize.go)
		v.State = "expired"
	}
	return v
}

// Invites implements hostapi.Backend.
func (l *Backend) Invites(context.Context) (*hostapi.Invites, error) {
	if l.srv == nil {
		return nil, l.noHost()
	}
	now := time.Now()
	out := &hostapi.Invites{Schema: hostapi.SchemaInvites, Invites: []hostapi.Invite{}, Grants: []hostapi.Grant{}}
	for _, inv := range l.srv.ListInvites() {
		out.Invites = append(out.Invites, inviteOf(inv, now))
	}
	for _, g := range l.srv.Grants() {
		out.Grants = append(out.Grants, grantOf(g, now))
	}
	return out, nil
}

func grantOf(g host.Grant, now time.Time) hostapi.Grant {
	v := hostapi.Grant{ID: g.ID, Mode: g.Mode, AppID: g.AppID, DeviceID: g.DeviceID, DeviceName: g.DeviceName,
		MaxToolPolicy: g.MaxToolPolicy, CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt, RevokedAt: g.RevokedAt,
		LastUsedAt: g.LastUsedAt, State: "active"}
	if g.Mode == host.GrantInvite {
		v.InviteID = g.ConfigID
	}
	switch {
	case !g.RevokedAt.IsZero():
		v.State = "revoked"
	case now.After(g.ExpiresAt):
		v.State = "expired"
	}
	return v
}

// Revoke implements hostapi.Backend.
func (l *Backend) Revoke(_ context.Context, id string) (*hostapi.Revocation, error) {
	if l.srv == nil {
		return nil, l.noHost()
	}
	r, err := l.srv.Revoke(id)
	if err != nil {
		if errors.Is(err, host.ErrNotFound) {
			return nil, hostapi.Errorf(http.StatusNotFound, wire.CodeResourceNotFound, "no invite or grant %q (see 'ansight pairing list')", id)
		}
		return nil, err
	}
	return &hostapi.Revocation{Schema: hostapi.SchemaRevoke, ID: r.ID, Revoked: true, Kind: r.Kind, GrantIDs: r.GrantIDs, SessionsEnded: r.Sessions}, nil
}

// Forget implements hostapi.Backend.
func (l *Backend) Forget(_ context.Context, id string) (*hostapi.Forgetting, error) {
	if l.srv == nil {
		return nil, l.noHost()
	}
	g, err := l.srv.Forget(id)
	switch {
	case errors.Is(err, host.ErrNotFound):
		return nil, hostapi.Errorf(http.StatusNotFound, wire.CodeResourceNotFound, "no pairing %q (see 'ansight pairing list')", id)
	case errors.Is(err, host.ErrGrantActive):
		return nil, hostapi.Errorf(http.StatusConflict, wire.CodeBadRequest, "pairing %q is active: revoke it first ('ansight pairing revoke %s')", id, id)
	case err != nil:
		return nil, err
	}
	return &hostapi.Forgetting{Schema: hostapi.SchemaForget, ID: g.ID, Forgotten: true, Mode: g.Mode, AppID: g.AppID, DeviceID: g.DeviceID}, nil
}

// Events implements hostapi.Backend over the server's subscription, which never blocks
// the session that changed.
func (l *Backend) Events(ctx context.Context, fn func(hostapi.Event) error) error {
	if l.srv == nil {
		<-ctx.Done() // no host: no session changes
		return ctx.Err()
	}
	events, unsubscribe := l.srv.Subscribe(64)
	defer unsubscribe()
	renamed, unsubscribeRenames := l.renamed.Subscribe(16)
	defer unsubscribeRenames()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return hostapi.Errorf(http.StatusServiceUnavailable, wire.CodeSessionClosed, "the host stopped (it is shutting down)")
			}
			if err := fn(eventOf(ev)); err != nil {
				return err
			}
		case ev := <-renamed:
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
}

// Shutdown implements hostapi.Backend.
func (l *Backend) Shutdown(context.Context) error {
	if l.shutdown == nil {
		return hostapi.Errorf(http.StatusNotImplemented, wire.CodeBadRequest, "this host cannot be stopped through the control API")
	}
	go l.shutdown()
	return nil
}

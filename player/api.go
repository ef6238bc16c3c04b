package player

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// maxBodyBytes bounds a request body (a batch of 32 calls with their arguments).
const maxBodyBytes = 16 << 20

// ToolForm is one tool's definition with the form generated from its argumentsSchema.
type ToolForm struct {
	Schema    string         `json:"schema"`
	SessionID string         `json:"sessionId"`
	Revision  string         `json:"revision"`
	Tool      wire.ToolEntry `json:"tool"`
	Form      *Field         `json:"form,omitzero"`
	// FormError says why there is no form (the raw JSON editor still works).
	FormError string `json:"formError,omitzero"`
}

// Validation is the answer to a validation request: the schema's violations, if any.
type Validation struct {
	Schema     string             `json:"schema"`
	Valid      bool               `json:"valid"`
	Violations []schema.Violation `json:"violations"`
	// Skipped says why nothing was checked (flattened-string arguments, a schema that
	// does not compile).
	Skipped string `json:"skipped,omitzero"`
}

// Records is what an app handed over in a session (crash reports, annotated feedback),
// with URLs serving their files to the page.
type Records struct {
	Schema      string                `json:"schema"`
	SessionID   string                `json:"sessionId"`
	Crashes     []hostapi.CrashReport `json:"crashes"`
	Annotations []hostapi.Annotation  `json:"annotations"`
	FileURLs    map[string]string     `json:"fileUrls"` // file path → URL
}

// CallAnswer is a call's outcome with URLs serving its artifacts to the page.
type CallAnswer struct {
	Schema       string            `json:"schema"`
	Call         *hostapi.Call     `json:"call"`
	ArtifactURLs map[string]string `json:"artifactUrls"` // transfer id → URL
}

// BatchAnswer is a batch's outcome with URLs serving its artifacts to the page.
type BatchAnswer struct {
	Schema       string            `json:"schema"`
	Batch        *hostapi.Batch    `json:"batch"`
	ArtifactURLs map[string]string `json:"artifactUrls"`
}

func (p *Player) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", p.page)
	m.HandleFunc("GET /assets/{name}", p.asset)
	m.HandleFunc("GET /api/events", p.events)
	m.HandleFunc("GET /api/status", func(w http.ResponseWriter, r *http.Request) {
		v, err := p.backend.Status(r.Context())
		respond(w, v, err)
	})
	m.HandleFunc("GET /api/sessions", func(w http.ResponseWriter, r *http.Request) {
		v, err := p.backend.Sessions(r.Context())
		respond(w, v, err)
	})
	m.HandleFunc("GET /api/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		v, err := p.backend.Session(r.Context(), r.PathValue("id"))
		respond(w, v, err)
	})
	m.HandleFunc("GET /api/sessions/{id}/records", p.records)
	m.HandleFunc("GET /api/sessions/{id}/tools", func(w http.ResponseWriter, r *http.Request) {
		v, err := p.backend.Tools(r.Context(), r.PathValue("id"), hostapi.ToolsRequest{Detail: hostapi.DetailSummary})
		respond(w, v, err)
	})
	m.HandleFunc("GET /api/sessions/{id}/tools/{tool}", p.tool)
	m.HandleFunc("POST /api/sessions/{id}/tools/{tool}/validate", p.validate)
	m.HandleFunc("POST /api/sessions/{id}/call", p.call)
	m.HandleFunc("POST /api/sessions/{id}/batch", p.batch)
	m.HandleFunc("POST /api/sessions/{id}/ui", p.ui)
	m.HandleFunc("GET /api/sessions/{id}/traffic", p.trafficPage)
	m.HandleFunc("GET /api/sessions/{id}/frame", p.frame)
	m.HandleFunc("GET /api/recordings", func(w http.ResponseWriter, r *http.Request) {
		v, err := p.backend.Recordings(r.Context())
		respond(w, v, err)
	})
	m.HandleFunc("GET /api/sessions/{id}/recording", p.recording)
	m.HandleFunc("GET /api/sessions/{id}/recording/{seq}/file", p.recordFile)
	m.HandleFunc("GET /api/sessions/{id}/flow", p.saveFlow)
	m.HandleFunc("GET /api/artifacts/{path...}", p.artifact)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "no such page: "+r.Method+" "+r.URL.Path)
	})
	p.mux = m
}

// page serves the single page, with this run's CSRF token in it.
func (p *Player) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = p.index.Execute(w, struct{ CSRF, Version string }{p.keys.Load().csrf, p.opts.Version})
}

// records lists a session's crash reports and annotations; their files are served from
// the artifact directory (the session's directory is under it).
func (p *Player) records(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c, err := p.backend.Crashes(r.Context(), id)
	if err != nil {
		respond(w, nil, err)
		return
	}
	a, err := p.backend.Annotations(r.Context(), id)
	if err != nil {
		respond(w, nil, err)
		return
	}
	out := &Records{Schema: SchemaRecords, SessionID: id, Crashes: c.Crashes, Annotations: a.Annotations, FileURLs: map[string]string{}}
	for _, cr := range c.Crashes {
		for _, f := range cr.Files {
			if u := p.artifactURL(f.Path); u != "" {
				out.FileURLs[f.Path] = u
			}
		}
	}
	for _, an := range a.Annotations {
		if u := p.artifactURL(an.Path); u != "" {
			out.FileURLs[an.Path] = u
		}
	}
	respond(w, out, nil)
}

func (p *Player) tool(w http.ResponseWriter, r *http.Request) {
	t, err := p.backend.Tool(r.Context(), r.PathValue("id"), r.PathValue("tool"))
	if err != nil {
		respond(w, nil, err)
		return
	}
	out := &ToolForm{Schema: SchemaToolForm, SessionID: t.SessionID, Revision: t.Revision, Tool: t.Tool}
	if t.Tool.ArgumentEncoding == wire.ArgumentEncodingFlattenedString {
		out.FormError = "this tool takes flattened-string arguments: edit them as JSON"
	} else if out.Form, err = FormOf(t.Tool.ArgumentsSchema); err != nil {
		out.FormError = err.Error()
	}
	respond(w, out, nil)
}

// validate checks arguments against the tool's schema with the validator the app uses,
// so that the page shows the app's own messages before anything is sent.
func (p *Player) validate(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	t, err := p.backend.Tool(r.Context(), r.PathValue("id"), r.PathValue("tool"))
	if err != nil {
		respond(w, nil, err)
		return
	}
	out := &Validation{Schema: SchemaValidate, Valid: true, Violations: []schema.Violation{}}
	switch {
	case t.Tool.ArgumentEncoding == wire.ArgumentEncodingFlattenedString:
		out.Skipped = "flattened-string arguments are not validated"
	case len(t.Tool.ArgumentsSchema) == 0:
		out.Skipped = "the tool has no argumentsSchema"
	default:
		s, err := schema.Compile(t.Tool.ArgumentsSchema)
		if err != nil {
			out.Skipped = "the tool's argumentsSchema does not compile: " + err.Error()
			break
		}
		if v := s.Validate(body); len(v) > 0 {
			out.Valid, out.Violations = false, v
		}
	}
	respond(w, out, nil)
}

func (p *Player) call(w http.ResponseWriter, r *http.Request) {
	var req hostapi.CallRequest
	if !decodeBody(w, r, &req) {
		return
	}
	res, err := p.backend.Call(r.Context(), r.PathValue("id"), req, nil)
	if err != nil {
		respond(w, nil, err)
		return
	}
	respond(w, &CallAnswer{Schema: SchemaCall, Call: res, ArtifactURLs: p.artifactURLs(res.Artifacts)}, nil)
}

func (p *Player) batch(w http.ResponseWriter, r *http.Request) {
	var req hostapi.BatchRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if n := len(req.Calls); n == 0 || n > wire.MaxBatchSize {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "a batch holds 1 to "+strconv.Itoa(wire.MaxBatchSize)+" calls")
		return
	}
	res, err := p.backend.Batch(r.Context(), r.PathValue("id"), req, nil)
	if err != nil {
		respond(w, nil, err)
		return
	}
	respond(w, &BatchAnswer{Schema: SchemaBatch, Batch: res, ArtifactURLs: p.artifactURLs(res.Artifacts)}, nil)
}

// ui runs a UI operation (the tree the page shows, the actions of its node panel) through
// the host, which reads any SDK's tree through one model and resolves the node.
func (p *Player) ui(w http.ResponseWriter, r *http.Request) {
	var req hostapi.UIRequest
	if !decodeBody(w, r, &req) {
		return
	}
	res, err := p.backend.UI(r.Context(), r.PathValue("id"), req)
	respond(w, res, err)
}

func (p *Player) artifactURLs(list []hostapi.Artifact) map[string]string {
	out := map[string]string{}
	for _, a := range list {
		if u := p.artifactURL(a.Path); u != "" && a.Status == "complete" {
			out[a.TransferID] = u
		}
	}
	return out
}

// frame serves a session's latest live frame.
func (p *Player) frame(w http.ResponseWriter, r *http.Request) {
	f := p.frameOf(r.PathValue("id"))
	if f == nil {
		if p.recordedFrame(w, r) {
			return
		}
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "this session has streamed no live frame, and its recording holds none")
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.jpeg)))
	w.Write(f.jpeg)
}

// recording answers one page of a session's recording, for the timeline: the control
// API's records, with the same query parameters (kind, since, until, after, limit, …).
func (p *Player) recording(w http.ResponseWriter, r *http.Request) {
	req, err := hostapi.ParseRecordsRequest(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, err.Error())
		return
	}
	v, err := p.backend.Records(r.Context(), r.PathValue("id"), req)
	respond(w, v, err)
}

// recordFile serves a record's file: a frame's JPEG, a tree, a large call payload, an
// artifact. As artifacts are, it is shown inline only when its type is a harmless one
// (servedTypes); anything else is a download.
func (p *Player) recordFile(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "record "+strconv.Quote(r.PathValue("seq"))+": want its seq")
		return
	}
	b, err := p.backend.Blob(r.Context(), r.PathValue("id"), seq)
	if err != nil {
		respond(w, nil, err)
		return
	}
	defer b.Body.Close()
	ct, inline := servedTypes[strings.ToLower(path.Ext(b.Name))]
	if !inline {
		ct = "application/octet-stream"
		w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(b.Name))
	}
	w.Header().Set("Content-Type", ct)
	// A record's file never changes: a seq is never reused.
	w.Header().Set("Cache-Control", "private, max-age=86400, immutable")
	if b.SizeBytes >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(b.SizeBytes, 10))
	}
	io.Copy(w, b.Body)
}

func frameURL(sessionID string, seq int64) string {
	return "/api/sessions/" + pathEscape(sessionID) + "/frame?seq=" + strconv.FormatInt(seq, 10)
}

// readBody reads a bounded request body ("{}" when empty).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, wire.CodeBadRequest, "request body: "+err.Error())
		return nil, false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	return body, true
}

// decodeBody reads a request body with the strict decoder.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := readBody(w, r)
	if !ok {
		return false
	}
	if err := wire.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, "request body: "+err.Error())
		return false
	}
	return true
}

func respond(w http.ResponseWriter, v any, err error) {
	if err != nil {
		var ae *hostapi.APIError
		switch {
		case errors.As(err, &ae):
			writeError(w, ae.Status, ae.Code, ae.Message)
		case errors.Is(err, context.Canceled):
			writeError(w, 499, "canceled", "the request was cancelled")
		default:
			writeError(w, http.StatusInternalServerError, wire.CodeInternal, err.Error())
		}
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func writeError(w http.ResponseWriter, status int, code wire.Code, msg string) {
	writeJSON(w, status, hostapi.Error{Schema: hostapi.SchemaError, Code: code, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(hostapi.Error{Schema: hostapi.SchemaError, Code: wire.CodeInternal, Message: err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

package hostapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// maxRequestBytes bounds a control request body (a batch of 32 calls with arguments).
const maxRequestBytes = 16 << 20

// ndjson is the media type of streamed answers: progress lines, then the final object.
const ndjson = "application/x-ndjson"

// NewHandler serves b as the HTTP+JSON control API (docs/control-api.md).
func NewHandler(b Backend) http.Handler {
	h := &handler{b: b}
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.method+" "+rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.serve(h, w, r) })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, Errorf(http.StatusNotFound, wire.CodeResourceNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

type handler struct{ b Backend }

func (h *handler) tools(w http.ResponseWriter, r *http.Request) {
	var req ToolsRequest
	if !readBody(w, r, &req) {
		return
	}
	v, err := h.b.Tools(r.Context(), r.PathValue("id"), req)
	respond(w, v, err)
}

func (h *handler) tool(w http.ResponseWriter, r *http.Request) {
	v, err := h.b.Tool(r.Context(), r.PathValue("id"), r.PathValue("tool"))
	respond(w, v, err)
}

func (h *handler) call(w http.ResponseWriter, r *http.Request) {
	var req CallRequest
	if !readBody(w, r, &req) {
		return
	}
	stream(w, r, func(ctx context.Context, progress func(Progress)) (any, error) {
		return h.b.Call(ctx, r.PathValue("id"), req, progress)
	})
}

func (h *handler) batch(w http.ResponseWriter, r *http.Request) {
	var req BatchRequest
	if !readBody(w, r, &req) {
		return
	}
	stream(w, r, func(ctx context.Context, progress func(Progress)) (any, error) {
		return h.b.Batch(ctx, r.PathValue("id"), req, progress)
	})
}

func (h *handler) ui(w http.ResponseWriter, r *http.Request) {
	var req UIRequest
	if !readBody(w, r, &req) {
		return
	}
	v, err := h.b.UI(r.Context(), r.PathValue("id"), req)
	respond(w, v, err)
}

// records answers one page of records, or with follow=true streams them as NDJSON, one
// record a line: the first page at once, then each new record as the host records it,
// until the client goes away. A failure after the stream started is a last line holding
// an ansight.error/v1 object.
func (h *handler) records(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req, err := ParseRecordsRequest(q)
	follow := false
	if s := q.Get("follow"); s != "" && err == nil {
		follow, err = strconv.ParseBool(s)
	}
	if err != nil {
		writeError(w, Errorf(http.StatusBadRequest, wire.CodeBadRequest, "%v", err))
		return
	}
	id := r.PathValue("id")
	if !follow {
		v, err := h.b.Records(r.Context(), id, req)
		respond(w, v, err)
		return
	}
	// The first page answers errors (no such session, a bad filter) with a status, and
	// starts the stream at once even when there is nothing to send yet.
	req.Newest = false
	page, err := h.b.Records(r.Context(), id, req)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", ndjson)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	line := ndjsonLine(w, flusher)
	for _, rec := range page.Records {
		if line(rec) != nil {
			return
		}
		req.After = rec.Seq
	}
	err = h.b.Follow(r.Context(), id, req, func(rec Record) error { return line(rec) })
	if err != nil && r.Context().Err() == nil {
		line(toWireError(err))
	}
}

// events streams the host's session events as NDJSON, one event a line, until the client
// goes away. A failure after the stream started is a last line holding an ansight.error/v1
// object.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", ndjson)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush() // the client knows at once that it is subscribed
	}
	line := ndjsonLine(w, flusher)
	err := h.b.Events(r.Context(), func(ev Event) error { return line(ev) })
	if err != nil && r.Context().Err() == nil {
		line(toWireError(err))
	}
}

// ndjsonLine returns a writer of one JSON value a line, each flushed at once.
func ndjsonLine(w http.ResponseWriter, flusher http.Flusher) func(v any) error {
	return func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
}

func (h *handler) blob(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil {
		writeError(w, Errorf(http.StatusBadRequest, wire.CodeBadRequest, "record %q: want its seq", r.PathValue("seq")))
		return
	}
	b, err := h.b.Blob(r.Context(), r.PathValue("id"), seq)
	if err != nil {
		writeError(w, err)
		return
	}
	defer b.Body.Close()
	w.Header().Set("Content-Type", b.MimeType)
	w.Header().Set("Content-Length", strconv.FormatInt(b.SizeBytes, 10))
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": b.Name}))
	io.Copy(w, b.Body)
}

// export streams a session's archive. The status is sent with the first bytes: a failure
// before them is an error answer, one after them aborts the response, so that a client
// never takes a cut archive for a whole one.
func (h *handler) export(w http.ResponseWriter, r *http.Request) {
	var req ExportRequest
	for _, list := range r.URL.Query()["redact"] {
		for n := range strings.SplitSeq(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				req.Redact = append(req.Redact, n)
			}
		}
	}
	req.Format = r.URL.Query().Get("format")
	req.Sanitize = r.URL.Query().Get("sanitize") == "true"
	lw := &lazyWriter{w: w, contentType: "application/zip"}
	err := h.b.Export(r.Context(), r.PathValue("id"), req, lw)
	switch {
	case err == nil && !lw.started:
		lw.start()
	case err != nil && !lw.started:
		writeError(w, err)
	case err != nil:
		panic(http.ErrAbortHandler)
	}
}

// lazyWriter sends the answer's status and content type with its first bytes.
type lazyWriter struct {
	w           http.ResponseWriter
	contentType string
	started     bool
}

func (l *lazyWriter) start() {
	l.started = true
	l.w.Header().Set("Content-Type", l.contentType)
	l.w.WriteHeader(http.StatusOK)
}

func (l *lazyWriter) Write(b []byte) (int, error) {
	if !l.started {
		l.start()
	}
	return l.w.Write(b)
}

func (h *handler) importRecording(w http.ResponseWriter, r *http.Request) {
	v, err := h.b.Import(r.Context(), ImportRequest{Password: r.Header.Get(PasswordHeader)}, r.Body)
	respond(w, v, err)
}

func (h *handler) deleteRecording(w http.ResponseWriter, r *http.Request) {
	if err := h.b.DeleteRecording(r.Context(), r.PathValue("id")); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) issueInvite(w http.ResponseWriter, r *http.Request) {
	var req InviteRequest
	if !readBody(w, r, &req) {
		return
	}
	v, err := h.b.IssueInvite(r.Context(), req)
	respond(w, v, err)
}

func (h *handler) rename(w http.ResponseWriter, r *http.Request) {
	var req RenameRequest
	if !readBody(w, r, &req) {
		return
	}
	v, err := h.b.Rename(r.Context(), r.PathValue("id"), req)
	respond(w, v, err)
}

// player answers GET /v1/player, and POST /v1/player/token, which renews the token.
func (h *handler) player(w http.ResponseWriter, r *http.Request) {
	v, err := h.b.Player(r.Context(), r.Method == http.MethodPost)
	respond(w, v, err)
}

func (h *handler) shutdown(w http.ResponseWriter, r *http.Request) {
	if err := h.b.Shutdown(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// respond writes v as the JSON answer, or the error.
func respond(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	writeValue(w, http.StatusOK, v)
}

// stream runs a call. When the client accepts NDJSON, progress lines {"progress":{…}}
// precede the final line {"result":{…}} or {"error":{…}}; otherwise one JSON answer.
func stream(w http.ResponseWriter, r *http.Request, run func(context.Context, func(Progress)) (any, error)) {
	if !strings.Contains(r.Header.Get("Accept"), ndjson) {
		v, err := run(r.Context(), nil)
		respond(w, v, err)
		return
	}
	w.Header().Set("Content-Type", ndjson)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	var mu sync.Mutex // progress may be reported from the session's reader goroutine
	// line writes one line; progress lines are flushed at once, the last line (result or
	// error) goes out as the handler returns, in one write with the end of the chunked
	// body: a client reading up to the result line then sees the body's end with it, so
	// its connection goes back to the pool (flushed alone, the end came in a second
	// write the client had often not read yet when it closed the body, and the
	// connection was dropped: 1–2.5 % of small calls dialed anew).
	line := func(v any, last bool) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		w.Write(append(b, '\n'))
		if flusher != nil && !last {
			flusher.Flush()
		}
	}
	done := false
	v, err := run(r.Context(), func(p Progress) {
		mu.Lock()
		stop := done
		mu.Unlock()
		if !stop {
			line(streamLine{Progress: &p}, false)
		}
	})
	mu.Lock()
	done = true
	mu.Unlock()
	if err != nil {
		line(streamLine{Error: toWireError(err)}, true)
		return
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		line(streamLine{Error: toWireError(merr)}, true)
		return
	}
	line(streamLine{Result: b}, true)
}

// streamLine is one line of an NDJSON answer.
type streamLine struct {
	Progress *Progress      `json:"progress,omitzero"`
	Result   jsontext.Value `json:"result,omitzero"`
	Error    *Error         `json:"error,omitzero"`
}

func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		writeError(w, Errorf(http.StatusRequestEntityTooLarge, wire.CodeBadRequest, "request body: %v", err))
		return false
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	if err := wire.Unmarshal(body, v); err != nil {
		writeError(w, Errorf(http.StatusBadRequest, wire.CodeBadRequest, "request body: %v", err))
		return false
	}
	return true
}

func toWireError(err error) *Error {
	var e *APIError
	if !errors.As(err, &e) {
		e = Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
	}
	return &Error{Schema: SchemaError, Code: e.Code, Message: e.Message}
}

func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var e *APIError
	if errors.As(err, &e) {
		status = e.Status
	}
	writeValue(w, status, toWireError(err))
}

func writeValue(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(Error{Schema: SchemaError, Code: wire.CodeInternal, Message: err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// answer serves an endpoint whose answer is one Backend method of no argument.
func answer[T any](f func(Backend, context.Context) (T, error)) func(*handler, http.ResponseWriter, *http.Request) {
	return func(h *handler, w http.ResponseWriter, r *http.Request) {
		v, err := f(h.b, r.Context())
		respond(w, v, err)
	}
}

// answerByID serves an endpoint whose answer is one Backend method of the path's {id}.
func answerByID[T any](f func(Backend, context.Context, string) (T, error)) func(*handler, http.ResponseWriter, *http.Request) {
	return func(h *handler, w http.ResponseWriter, r *http.Request) {
		v, err := f(h.b, r.Context(), r.PathValue("id"))
		respond(w, v, err)
	}
}

package hostapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/wire"
)

// ErrHostUnavailable means no host answers on the control socket.
var ErrHostUnavailable = errors.New("no ansight host is running")

// Client implements Backend over the control socket of a resident host.
type Client struct {
	socket string
	http   *http.Client
}

var _ Backend = (*Client)(nil)

// NewClient returns a client for the host listening on the socket at path. It does not
// connect until the first call.
func NewClient(path string) *Client {
	return NewLocatingClient(func() string { return path })
}

// NewLocatingClient returns a client that asks locate for the socket's path whenever it
// opens a connection: for a long-running caller (the MCP bridge) that starts before the
// host and may find it in one of several places.
func NewLocatingClient(locate func() string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", locate())
		},
		DisableCompression: true,
	}
	return &Client{socket: locate(), http: &http.Client{Transport: tr}}
}

// Status implements Backend.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var v Status
	return &v, c.do(ctx, routeStatus.at(), nil, &v)
}

// Sessions implements Backend.
func (c *Client) Sessions(ctx context.Context) (*Sessions, error) {
	var v Sessions
	return &v, c.do(ctx, routeSessions.at(), nil, &v)
}

// Session implements Backend.
func (c *Client) Session(ctx context.Context, id string) (*Session, error) {
	var v Session
	return &v, c.do(ctx, routeSession.at(id), nil, &v)
}

// Crashes implements Backend.
func (c *Client) Crashes(ctx context.Context, sessionID string) (*Crashes, error) {
	var v Crashes
	return &v, c.do(ctx, routeCrashes.at(sessionID), nil, &v)
}

// Annotations implements Backend.
func (c *Client) Annotations(ctx context.Context, sessionID string) (*Annotations, error) {
	var v Annotations
	return &v, c.do(ctx, routeAnnotations.at(sessionID), nil, &v)
}

// Tools implements Backend.
func (c *Client) Tools(ctx context.Context, sessionID string, req ToolsRequest) (*Tools, error) {
	var v Tools
	return &v, c.do(ctx, routeTools.at(sessionID), req, &v)
}

// Tool implements Backend.
func (c *Client) Tool(ctx context.Context, sessionID, toolID string) (*Tool, error) {
	var v Tool
	return &v, c.do(ctx, routeTool.at(sessionID, toolID), nil, &v)
}

// Call implements Backend.
func (c *Client) Call(ctx context.Context, sessionID string, req CallRequest, progress func(Progress)) (*Call, error) {
	var v Call
	return &v, c.stream(ctx, routeCall.at(sessionID), req, &v, progress)
}

// Batch implements Backend.
func (c *Client) Batch(ctx context.Context, sessionID string, req BatchRequest, progress func(Progress)) (*Batch, error) {
	var v Batch
	return &v, c.stream(ctx, routeBatch.at(sessionID), req, &v, progress)
}

// UI implements Backend.
func (c *Client) UI(ctx context.Context, sessionID string, req UIRequest) (*UIOperation, error) {
	var v UIOperation
	return &v, c.do(ctx, routeUI.at(sessionID), req, &v)
}

// Recordings implements Backend.
func (c *Client) Recordings(ctx context.Context) (*Sessions, error) {
	var v Sessions
	return &v, c.do(ctx, routeRecordings.at(), nil, &v)
}

func recordsTarget(sessionID string, req RecordsRequest, follow bool) target {
	v := req.Values()
	if follow {
		v.Set("follow", "true")
	}
	t := routeRecords.at(sessionID)
	if len(v) > 0 {
		t.path += "?" + v.Encode()
	}
	return t
}

// Records implements Backend.
func (c *Client) Records(ctx context.Context, sessionID string, req RecordsRequest) (*Records, error) {
	var v Records
	return &v, c.do(ctx, recordsTarget(sessionID, req, false), nil, &v)
}

// Follow implements Backend.
func (c *Client) Follow(ctx context.Context, sessionID string, req RecordsRequest, fn func(Record) error) error {
	return follow(c, ctx, recordsTarget(sessionID, req, true), "records", fn)
}

// Events implements Backend.
func (c *Client) Events(ctx context.Context, fn func(Event) error) error {
	return follow(c, ctx, routeEvents.at(), "events", fn)
}

// follow reads an NDJSON stream of T, one a line, calling fn with each, until ctx ends,
// fn fails, or the host ends the stream (an error line, or the end of the body).
func follow[T any](c *Client, ctx context.Context, t target, what string, fn func(T) error) error {
	resp, err := c.raw(ctx, t, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), wire.DefaultMaxMessageBytes)
	for sc.Scan() {
		var e Error
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Schema == SchemaError {
			return &APIError{Status: http.StatusInternalServerError, Code: e.Code, Message: e.Message}
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("control: decode %s: %w", what, err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("control: read %s: %w", what, err)
	}
	return fmt.Errorf("control: the host ended the stream of %s", what)
}

// Blob implements Backend.
func (c *Client) Blob(ctx context.Context, sessionID string, seq int64) (*Blob, error) {
	resp, err := c.raw(ctx, routeBlob.at(sessionID, strconv.FormatInt(seq, 10)), nil, "")
	if err != nil {
		return nil, err
	}
	b := &Blob{MimeType: resp.Header.Get("Content-Type"), SizeBytes: resp.ContentLength, Body: resp.Body}
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil {
		b.Name = path.Base(params["filename"])
	}
	return b, nil
}

// Export implements Backend.
func (c *Client) Export(ctx context.Context, sessionID string, req ExportRequest, w io.Writer) error {
	t := routeExport.at(sessionID)
	q := url.Values{}
	if len(req.Redact) > 0 {
		q.Set("redact", strings.Join(req.Redact, ","))
	}
	if req.Format != "" {
		q.Set("format", req.Format)
	}
	if req.Sanitize {
		q.Set("sanitize", "true")
	}
	if len(q) > 0 {
		t.path += "?" + q.Encode()
	}
	resp, err := c.raw(ctx, t, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("control: the export ended early: %w", err)
	}
	return nil
}

// Import implements Backend.
func (c *Client) Import(ctx context.Context, req ImportRequest, archive io.Reader) (*Session, error) {
	resp, err := c.rawWith(ctx, routeImport.at(), archive, "application/zip", func(h http.Header) {
		if req.Password != "" {
			h.Set(PasswordHeader, req.Password)
		}
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, wire.DefaultMaxMessageBytes))
	if err != nil {
		return nil, fmt.Errorf("control: read answer: %w", err)
	}
	var v Session
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("control: decode answer: %w", err)
	}
	return &v, nil
}

// DeleteRecording implements Backend.
func (c *Client) DeleteRecording(ctx context.Context, sessionID string) error {
	return c.do(ctx, routeDeleteRecording.at(sessionID), nil, nil)
}

// raw sends a request whose body (or answer) is not one JSON value and returns the
// answer of a 2xx status, to be closed; any other status is its *APIError.
func (c *Client) raw(ctx context.Context, t target, body io.Reader, contentType string) (*http.Response, error) {
	return c.rawWith(ctx, t, body, contentType, nil)
}

// rawWith is raw with headers set by header (nil: none).
func (c *Client) rawWith(ctx context.Context, t target, body io.Reader, contentType string, header func(http.Header)) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, t.method, "http://ansight"+t.path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if header != nil {
		header(req.Header)
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, decodeAPIError(resp.StatusCode, data)
	}
	return resp, nil
}

// IssueInvite implements Backend.
func (c *Client) IssueInvite(ctx context.Context, req InviteRequest) (*Invite, error) {
	var v Invite
	return &v, c.do(ctx, routeIssueInvite.at(), req, &v)
}

// Invites implements Backend.
func (c *Client) Invites(ctx context.Context) (*Invites, error) {
	var v Invites
	return &v, c.do(ctx, routeInvites.at(), nil, &v)
}

// Revoke implements Backend.
func (c *Client) Revoke(ctx context.Context, id string) (*Revocation, error) {
	var v Revocation
	return &v, c.do(ctx, routeRevoke.at(id), nil, &v)
}

// Rename implements Backend.
func (c *Client) Rename(ctx context.Context, sessionID string, req RenameRequest) (*Renaming, error) {
	var v Renaming
	return &v, c.do(ctx, routeRename.at(sessionID), req, &v)
}

// Forget implements Backend.
func (c *Client) Forget(ctx context.Context, id string) (*Forgetting, error) {
	var v Forgetting
	return &v, c.do(ctx, routeForget.at(id), nil, &v)
}

// Disconnect implements Backend.
func (c *Client) Disconnect(ctx context.Context, sessionID string) (*Disconnection, error) {
	var v Disconnection
	return &v, c.do(ctx, routeDisconnect.at(sessionID), nil, &v)
}

// Player implements Backend.
func (c *Client) Player(ctx context.Context, renew bool) (*PlayerAccess, error) {
	var v PlayerAccess
	rt := routePlayer
	if renew {
		rt = routePlayerToken
	}
	return &v, c.do(ctx, rt.at(), nil, &v)
}

// Shutdown implements Backend.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, routeShutdown.at(), nil, nil)
}

func (c *Client) request(ctx context.Context, t target, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, "http://ansight"+t.path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("%w (socket %s): %v", ErrHostUnavailable, c.socket, unwrapURLError(err))
	}
	return resp, nil
}

func (c *Client) do(ctx context.Context, t target, body, out any) error {
	req, err := c.request(ctx, t, body)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, wire.DefaultMaxMessageBytes))
	if err != nil {
		return fmt.Errorf("control: read answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		return decodeAPIError(resp.StatusCode, data)
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("control: decode answer: %w", err)
	}
	return nil
}

func (c *Client) stream(ctx context.Context, t target, body, out any, progress func(Progress)) error {
	req, err := c.request(ctx, t, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", ndjson)
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return decodeAPIError(resp.StatusCode, data)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), ndjson) {
		data, err := io.ReadAll(io.LimitReader(resp.Body, wire.DefaultMaxMessageBytes))
		if err != nil {
			return err
		}
		return json.Unmarshal(data, out)
	}
	sc := bufio.NewScanner(resp.Body)
	// Small to start: most answers are a line of a few hundred bytes, and a 64 KiB buffer
	// per call was most of what a small call through the socket allocated. The scanner
	// doubles it for longer lines, up to the message limit.
	sc.Buffer(make([]byte, 4<<10), wire.DefaultMaxMessageBytes)
	for sc.Scan() {
		var line streamLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("control: decode answer: %w", err)
		}
		switch {
		case line.Progress != nil:
			if progress != nil {
				progress(*line.Progress)
			}
		case line.Error != nil:
			return &APIError{Status: http.StatusInternalServerError, Code: line.Error.Code, Message: line.Error.Message}
		case line.Result != nil:
			return json.Unmarshal(line.Result, out)
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("control: read answer: %w", err)
	}
	return errors.New("control: the host ended the answer without a result")
}

func decodeAPIError(status int, data []byte) error {
	var e Error
	if err := json.Unmarshal(data, &e); err != nil || e.Code == "" {
		return &APIError{Status: status, Code: wire.CodeInternal, Message: fmt.Sprintf("host answered %d: %s", status, bytes.TrimSpace(data))}
	}
	return &APIError{Status: status, Code: e.Code, Message: e.Message}
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

package telemetry

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/internal/redact"
)

// NetworkSource is the source of the request records the RoundTripper makes.
const NetworkSource = "go.nethttp"

// networkRequest is an ansight.network-request.v1 record, in the official SDKs' member
// order. Bodies are never captured.
type networkRequest struct {
	Schema                string   `json:"schema"`
	ID                    string   `json:"id"`
	Source                string   `json:"source"`
	StartedAtUTC          string   `json:"startedAtUtc"`
	CompletedAtUTC        string   `json:"completedAtUtc"`
	DurationMilliseconds  float64  `json:"durationMilliseconds"`
	Method                string   `json:"method"`
	URL                   string   `json:"url"`
	Protocol              string   `json:"protocol,omitzero"`
	RequestHeaders        []header `json:"requestHeaders"`
	RequestBodySizeBytes  *int64   `json:"requestBodySizeBytes,omitempty"`
	StatusCode            *int     `json:"statusCode,omitempty"`
	ReasonPhrase          string   `json:"reasonPhrase,omitzero"`
	ResponseHeaders       []header `json:"responseHeaders"`
	ResponseBodySizeBytes *int64   `json:"responseBodySizeBytes,omitempty"`
	ErrorType             string   `json:"errorType,omitzero"`
	ErrorMessage          string   `json:"errorMessage,omitzero"`
}

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type networkMessage struct {
	Type      string         `json:"type"`
	SentAtUTC string         `json:"sentAtUtc"`
	Request   networkRequest `json:"request"`
}

// Bounds of a record, as the official SDKs apply them.
const (
	maxHeaders     = 128
	maxHeaderValue = 4096
	maxErrorText   = 4096
)

// RoundTripper wraps base (http.DefaultTransport when nil) to report every request's
// metadata to the host as CLIENT_NETWORK_REQUEST: method, URL, headers, status, body
// sizes as declared (Content-Length), start and end (the end is when the response's
// headers arrived), and the error of a failed request. Bodies are never read or sent.
// Credentials are redacted before the record is queued: values of Authorization, Cookie,
// Set-Cookie, Proxy-Authorization, X-Api-Key and X-Auth-Token, URL user information, and
// sensitive query parameters (token, key, secret, sig, …).
func (t *Telemetry) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{t: t, base: base}
}

type roundTripper struct {
	t    *Telemetry
	base http.RoundTripper
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := rt.base.RoundTrip(req)
	end := time.Now()
	rec := networkRequest{
		Schema: "ansight.network-request.v1", ID: newID(), Source: NetworkSource,
		StartedAtUTC: utc(start), CompletedAtUTC: utc(end),
		DurationMilliseconds: float64(end.Sub(start).Microseconds()) / 1000,
		Method:               strings.ToUpper(req.Method),
		URL:                  redact.URL(req.URL.String()),
		RequestHeaders:       headers(req.Header),
		ResponseHeaders:      []header{},
	}
	if rec.Method == "" {
		rec.Method = http.MethodGet
	}
	if req.ContentLength > 0 {
		n := req.ContentLength
		rec.RequestBodySizeBytes = &n
	}
	if err != nil {
		rec.ErrorType = fmt.Sprintf("%T", err)
		rec.ErrorMessage = clip(redact.Text(err.Error()), maxErrorText)
	} else {
		code := resp.StatusCode
		rec.StatusCode = &code
		rec.ReasonPhrase = http.StatusText(code)
		rec.Protocol = fmt.Sprintf("%d.%d", resp.ProtoMajor, resp.ProtoMinor)
		rec.ResponseHeaders = headers(resp.Header)
		if resp.ContentLength >= 0 {
			n := resp.ContentLength
			rec.ResponseBodySizeBytes = &n
		}
	}
	msg, merr := json.Marshal(networkMessage{Type: "CLIENT_NETWORK_REQUEST", SentAtUTC: utc(end), Request: rec})
	if merr == nil {
		select {
		case rt.t.requests <- msg:
		default:
			rt.t.requestsDropped.Add(1)
		}
	}
	return resp, err
}

// CloseIdleConnections closes the base transport's idle connections, so that
// http.Client.CloseIdleConnections still reaches it through the wrapper.
func (rt *roundTripper) CloseIdleConnections() {
	if c, ok := rt.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// headers lists h as [{name, value}] (one entry per value), sensitive values redacted.
func headers(h http.Header) []header {
	out := []header{}
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			if len(out) == maxHeaders {
				return out
			}
			if redact.SensitiveHeader(name) {
				v = redact.Value
			}
			out = append(out, header{Name: name, Value: clip(v, maxHeaderValue)})
		}
	}
	return out
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var clip = redact.Clip

package recording

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/redact"
)

// NetworkSchema is the schema of the request record CLIENT_NETWORK_REQUEST carries.
const NetworkSchema = "ansight.network-request.v1"

// Redacted replaces a sensitive value.
const Redacted = redact.Value

// Bounds of a network record, as the official SDKs apply them before sending.
const (
	maxHeaders         = 128
	maxHeaderName      = 256
	maxHeaderValue     = 4096
	maxErrorMessage    = 4096
	maxBodyBytes       = 64 << 10
	maxNetworkShortStr = 512
)

// sanitizeNetwork redacts a request record's secrets and bounds its sizes, keeping every
// other member as sent: sensitive header values, URL user information, sensitive query
// values (and those of signed-URL schemes), secrets in the error message and in text
// bodies. Unless keepRaw is set (Options.HonorNoRedact), the app's own
// redactSensitiveData:false does not stop it.
func sanitizeNetwork(req object, keepRaw bool) object {
	if keepRaw {
		if v := req.get("redactSensitiveData"); string(v) == "false" {
			return req
		}
	}
	out := make(object, 0, len(req))
	for _, m := range req {
		v := m.value
		switch m.name {
		case "url":
			if s, ok := str(v); ok {
				v = quoted(redact.URL(s))
			}
		case "method":
			if s, ok := str(v); ok {
				v = quoted(clip(strings.ToUpper(strings.TrimSpace(s)), 32))
			}
		case "requestHeaders", "responseHeaders":
			v = sanitizeHeaders(v)
		case "errorMessage":
			if s, ok := str(v); ok {
				v = quoted(clip(redact.Text(s), maxErrorMessage))
			}
		case "requestBody", "responseBody":
			v = sanitizeBody(v)
		case "reasonPhrase", "errorType", "protocol", "source", "id":
			if s, ok := str(v); ok && len(s) > maxNetworkShortStr {
				v = quoted(clip(s, maxNetworkShortStr))
			}
		}
		out = append(out, member{m.name, v})
	}
	return out
}

// sanitizeHeaders redacts the values of sensitive headers in a [{name, value}] list (an
// object of name → value, as some SDKs write, is handled alike) and bounds it.
func sanitizeHeaders(v jsontext.Value) jsontext.Value {
	switch v.Kind() {
	case '[':
		var items []jsontext.Value
		if err := unmarshalChecked(v, &items); err != nil {
			return jsontext.Value(`[]`)
		}
		out := []byte{'['}
		n := 0
		for _, it := range items {
			if n == maxHeaders {
				break
			}
			h, err := members(it)
			if err != nil {
				continue
			}
			name, _ := str(h.get("name"))
			if strings.TrimSpace(name) == "" {
				continue
			}
			h = h.set("name", quoted(clip(name, maxHeaderName)))
			if redact.SensitiveHeader(name) {
				h = h.set("value", quoted(Redacted))
			} else if s, ok := str(h.get("value")); ok && len(s) > maxHeaderValue {
				h = h.set("value", quoted(clip(s, maxHeaderValue)))
			}
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, h.encode()...)
			n++
		}
		return append(out, ']')
	case '{':
		h, err := members(v)
		if err != nil {
			return jsontext.Value(`{}`)
		}
		if len(h) > maxHeaders {
			h = h[:maxHeaders]
		}
		for i := range h {
			if redact.SensitiveHeader(h[i].name) {
				h[i].value = quoted(Redacted)
			}
		}
		return h.encode()
	}
	return v
}

// sanitizeBody redacts secrets in a captured text body and bounds its data; a binary
// (base64) body is only bounded.
func sanitizeBody(v jsontext.Value) jsontext.Value {
	b, err := members(v)
	if err != nil {
		return v // null or not an object: nothing to redact
	}
	enc, _ := str(b.get("encoding"))
	data, ok := str(b.get("data"))
	if !ok {
		return b.encode()
	}
	if lower(enc) != "base64" {
		data = redact.Text(data)
	}
	if len(data) > maxBodyBytes*4/3+4 {
		data = clip(data, maxBodyBytes)
		b = b.set("truncated", jsontext.Value("true"))
	}
	return b.set("data", quoted(data)).encode()
}

// networkSummary is a request's one-line summary: "GET https://… 200" or the error type.
func networkSummary(req object) string {
	method, _ := str(req.get("method"))
	u, _ := str(req.get("url"))
	s := strings.TrimSpace(method + " " + u)
	if code, ok := integer(req.get("statusCode"), 0, 999); ok {
		s += fmt.Sprintf(" %d", code)
	} else if et, ok := str(req.get("errorType")); ok && et != "" {
		s += " " + et
	}
	return clip(s, maxTextBytes)
}

package recording

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// NetworkSchema is the schema of the request record CLIENT_NETWORK_REQUEST carries.
const NetworkSchema = "ansight.network-request.v1"

// Redacted replaces a sensitive value.
const Redacted = "<redacted>"

// Bounds of a network record, as the official SDKs apply them before sending.
const (
	maxHeaders         = 128
	maxHeaderName      = 256
	maxHeaderValue     = 4096
	maxURL             = 16384
	maxErrorMessage    = 4096
	maxBodyBytes       = 64 << 10
	maxNetworkShortStr = 512
)

// sensitiveHeaders are header names whose values are never stored (compared in lower case).
var sensitiveHeaders = set("authorization", "cookie", "proxy-authorization", "set-cookie", "x-api-key", "x-auth-token")

// sensitiveQuery are query parameter names whose values are never stored.
var sensitiveQuery = set("access_token", "accesskey", "access_key", "api_key", "apikey", "auth", "authorization",
	"client_secret", "code", "credential", "credentials", "id_token", "jwt", "key", "password", "passwd",
	"refresh_token", "sas", "sastoken", "secret", "secret_key", "security_token", "session_token", "sig",
	"signature", "token")

// Signed-URL schemes: when a URL carries the scheme's signature parameter, every parameter
// of the scheme is redacted (an Azure SAS's expiry and permissions identify the grant).
var (
	azureFingerprint = set("se", "skoid", "sp", "sr", "srt", "ss", "sv")
	azureQuery       = set("epk", "erk", "rscc", "rscd", "rsce", "rscl", "rsct", "saoid", "scid", "se", "sig", "si",
		"sip", "ske", "skoid", "sks", "skt", "sktid", "skv", "snapshot", "sp", "spk", "spr", "sr", "srk", "srt", "ss",
		"st", "suoid", "tn", "versionid", "sv")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// sensitiveText finds "name=value" and "name": "value" pairs of sensitive names in free
// text (error messages, text bodies).
var sensitiveText = regexp.MustCompile(`(?i)(access_token|accesskey|access_key|api_key|apikey|auth|authorization|client_secret|code|credential|credentials|id_token|jwt|key|password|passwd|refresh_token|sas|sastoken|secret|secret_key|security_token|session_token|sig|signature|token)(["']?\s*[:=]\s*["']?)([^&\s,;}"']+)`)

// urlInText finds URLs in free text.
var urlInText = regexp.MustCompile(`(?i)https?://[^\s"'<>]+`)

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
				v = quoted(sanitizeURL(s))
			}
		case "method":
			if s, ok := str(v); ok {
				v = quoted(clip(strings.ToUpper(strings.TrimSpace(s)), 32))
			}
		case "requestHeaders", "responseHeaders":
			v = sanitizeHeaders(v)
		case "errorMessage":
			if s, ok := str(v); ok {
				v = quoted(clip(sanitizeFreeText(s), maxErrorMessage))
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
			if sensitiveHeaders[lower(name)] {
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
			if sensitiveHeaders[lower(h[i].name)] {
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
		data = sanitizeFreeText(data)
	}
	if len(data) > maxBodyBytes*4/3+4 {
		data = clip(data, maxBodyBytes)
		b = b.set("truncated", jsontext.Value("true"))
	}
	return b.set("data", quoted(data)).encode()
}

// sanitizeFreeText redacts sensitive name=value pairs and the URLs in text.
func sanitizeFreeText(s string) string {
	s = sensitiveText.ReplaceAllString(s, "${1}${2}"+Redacted)
	return urlInText.ReplaceAllStringFunc(s, sanitizeURL)
}

// sanitizeURL redacts user information and sensitive query values, keeping the URL's
// text otherwise as it was (no re-encoding of what is kept).
func sanitizeURL(s string) string {
	s = clip(strings.TrimSpace(s), maxURL)
	if s == "" {
		return "<unknown>"
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			s = s[:i+3] + Redacted + rest[at:]
		}
	}
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	query, frag := s[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	return s[:q+1] + sanitizeQuery(query) + frag
}

// sanitizeQuery redacts sensitive parameters of a raw query string.
func sanitizeQuery(query string) string {
	if query == "" {
		return ""
	}
	pairs := strings.Split(query, "&")
	names := make(map[string]bool, len(pairs))
	for _, p := range pairs {
		names[queryName(p)] = true
	}
	has := func(ns ...string) bool {
		for _, n := range ns {
			if names[n] {
				return true
			}
		}
		return false
	}
	azure := names["sig"] && anyIn(names, azureFingerprint)
	aws := names["x-amz-signature"]
	google := names["x-goog-signature"]
	cloudFront := names["signature"] && has("key-pair-id", "policy", "expires")
	legacyGoogle := names["signature"] && names["googleaccessid"]
	alibaba := names["signature"] && names["ossaccesskeyid"] || names["x-oss-signature"]
	sensitive := func(n string) bool {
		switch {
		case sensitiveQuery[n]:
		case azure && azureQuery[n]:
		case aws && strings.HasPrefix(n, "x-amz-"):
		case google && strings.HasPrefix(n, "x-goog-"):
		case cloudFront && (n == "key-pair-id" || n == "policy" || n == "expires" || n == "hash-algorithm"):
		case legacyGoogle && (n == "googleaccessid" || n == "expires"):
		case alibaba && (strings.HasPrefix(n, "x-oss-") || n == "ossaccesskeyid" || n == "security-token"):
		default:
			return false
		}
		return true
	}
	redacted := url.QueryEscape(Redacted)
	for i, p := range pairs {
		if sensitive(queryName(p)) {
			raw, _, _ := strings.Cut(p, "=")
			pairs[i] = raw + "=" + redacted
		}
	}
	return strings.Join(pairs, "&")
}

func anyIn(names, of map[string]bool) bool {
	for n := range of {
		if names[n] {
			return true
		}
	}
	return false
}

// queryName is a query pair's decoded name in lower case.
func queryName(pair string) string {
	raw, _, _ := strings.Cut(pair, "=")
	if n, err := url.QueryUnescape(raw); err == nil {
		raw = n
	}
	return strings.ToLower(raw)
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

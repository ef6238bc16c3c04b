package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Value replaces a sensitive value.
const Value = "<redacted>"

// MaxURL bounds a URL kept in a record.
const MaxURL = 16384

// SensitiveHeader reports whether a header's value must never be kept (ASCII case ignored).
func SensitiveHeader(name string) bool {
	return sensitiveHeaders[strings.ToLower(strings.TrimSpace(name))]
}

// SensitiveQuery reports whether a query parameter's value must never be kept, whatever
// else the URL holds (name decoded, any case).
func SensitiveQuery(name string) bool { return sensitiveQuery[strings.ToLower(name)] }

// sensitiveHeaders are header names whose values are never kept (compared in lower case).
var sensitiveHeaders = set("authorization", "cookie", "proxy-authorization", "set-cookie", "x-api-key", "x-auth-token")

// sensitiveQuery are query parameter names whose values are never kept.
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

// Text redacts sensitive name=value pairs and the URLs in free text (error messages, text
// bodies).
func Text(s string) string {
	s = sensitiveText.ReplaceAllString(s, "${1}${2}"+Value)
	return urlInText.ReplaceAllStringFunc(s, URL)
}

// ReplaceURLs replaces each http(s) URL in s by f's result.
func ReplaceURLs(s string, f func(string) string) string { return urlInText.ReplaceAllStringFunc(s, f) }

// URL redacts a URL's user information and sensitive query values (and every parameter of
// a signed-URL scheme whose signature it carries), keeping the rest of its text as it was:
// nothing kept is re-encoded. It is bounded to MaxURL bytes.
func URL(s string) string {
	s = Clip(strings.TrimSpace(s), MaxURL)
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
			s = s[:i+3] + Value + rest[at:]
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
	return s[:q+1] + redactQuery(query) + frag
}

// redactQuery redacts sensitive parameters of a raw query string.
func redactQuery(query string) string {
	if query == "" {
		return ""
	}
	pairs := strings.Split(query, "&")
	names := make(map[string]bool, len(pairs))
	for _, p := range pairs {
		names[QueryName(p)] = true
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
	redacted := url.QueryEscape(Value)
	for i, p := range pairs {
		if sensitive(QueryName(p)) {
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

// QueryName is a query pair's decoded name in lower case.
func QueryName(pair string) string {
	raw, _, _ := strings.Cut(pair, "=")
	if n, err := url.QueryUnescape(raw); err == nil {
		raw = n
	}
	return strings.ToLower(raw)
}

// Clip bounds s to n bytes without splitting a UTF-8 sequence, marking a cut with "…": the
// bound every record member of free text gets.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

package recording

import (
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/redact"
)

// DefaultRedact is a redaction list for exports that covers the usual credentials. Network
// records are already sanitised on intake; an export's list removes more (custom headers,
// app-specific fields) before a recording leaves the machine.
var DefaultRedact = []string{"authorization", "cookie", "set-cookie", "proxy-authorization", "x-api-key", "x-auth-token",
	"token", "access_token", "refresh_token", "id_token", "password", "secret", "client_secret", "api_key", "apikey"}

// redactor removes the values of named headers and fields from a record's JSON: members
// with a listed name (any depth, ASCII case ignored), header entries {name, value} with a
// listed name, query parameters of URLs, and name=value / "name": "value" pairs in text.
type redactor struct {
	names map[string]bool
	text  *regexp.Regexp
}

func newRedactor(names []string) *redactor {
	if len(names) == 0 {
		return nil
	}
	rd := &redactor{names: map[string]bool{}}
	var alts []string
	for _, n := range names {
		n = lower(n)
		if n == "" || rd.names[n] {
			continue
		}
		rd.names[n] = true
		alts = append(alts, regexp.QuoteMeta(n))
	}
	if len(alts) == 0 {
		return nil
	}
	rd.text = regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_-])(` + strings.Join(alts, "|") + `)(["']?\s*[:=]\s*["']?)([^&\s,;}"']+)`)
	return rd
}

// json returns v with listed values redacted; v must be valid JSON (what the recorder
// stored, or what passed the strict scan on import).
func (rd *redactor) json(v jsontext.Value) jsontext.Value {
	switch v.Kind() {
	case '{':
		obj, err := members(v)
		if err != nil {
			return v
		}
		if name, ok := str(obj.get("name")); ok && rd.names[lower(name)] && obj.get("value") != nil {
			obj = obj.set("value", quoted(Redacted))
		}
		for i := range obj {
			if rd.names[lower(obj[i].name)] {
				obj[i].value = quoted(Redacted)
			} else {
				obj[i].value = rd.json(obj[i].value)
			}
		}
		return obj.encode()
	case '[':
		var items []jsontext.Value
		if unmarshalChecked(v, &items) != nil {
			return v
		}
		out := []byte{'['}
		for i, it := range items {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, rd.json(it)...)
		}
		return append(out, ']')
	case '"':
		s, ok := str(v)
		if !ok {
			return v
		}
		if r := rd.string(s); r != s {
			return quoted(r)
		}
	}
	return v
}

// string redacts name=value pairs and listed query parameters of URLs in text.
func (rd *redactor) string(s string) string {
	s = rd.text.ReplaceAllString(s, "${1}${2}${3}"+Redacted)
	return redact.ReplaceURLs(s, func(u string) string {
		q := strings.IndexByte(u, '?')
		if q < 0 {
			return u
		}
		pairs := strings.Split(u[q+1:], "&")
		for i, p := range pairs {
			if rd.names[redact.QueryName(p)] {
				raw, _, _ := strings.Cut(p, "=")
				pairs[i] = raw + "=%3Credacted%3E"
			}
		}
		return u[:q+1] + strings.Join(pairs, "&")
	})
}

package redact

import (
	"strings"
	"testing"
)

func FuzzRedactURL(f *testing.F) {
	f.Add("https://user:pw@example.test/a?token=x&view=1#frag")
	f.Add("https://blob.test/o?sv=1&sig=s&se=t")
	f.Add("https://s3.test/o?X-Amz-Signature=a&X-Amz-Credential=b")
	f.Fuzz(func(t *testing.T, u string) {
		out := URL(u)
		if len(out) > MaxURL*3+64 {
			t.Fatalf("sanitised URL of %d bytes", len(out))
		}
		q := strings.IndexByte(out, '?')
		if q < 0 {
			return
		}
		query := out[q+1:]
		if h := strings.IndexByte(query, '#'); h >= 0 {
			query = query[:h]
		}
		for _, p := range strings.Split(query, "&") {
			name, value, _ := strings.Cut(p, "=")
			if SensitiveQuery(QueryName(name)) && value != "%3Credacted%3E" {
				t.Fatalf("%q kept %s=%s", u, name, value)
			}
		}
	})
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@example.test/a?token=x&view=1#frag":   "https://<redacted>@example.test/a?token=%3Credacted%3E&view=1#frag",
		"https://blob.test/o?sv=1&sig=s&se=t&keep=1":           "https://blob.test/o?sv=%3Credacted%3E&sig=%3Credacted%3E&se=%3Credacted%3E&keep=1",
		"https://s3.test/o?X-Amz-Signature=a&X-Amz-Date=b&c=d": "https://s3.test/o?X-Amz-Signature=%3Credacted%3E&X-Amz-Date=%3Credacted%3E&c=d",
		"https://example.test/p?Access%5FToken=a":              "https://example.test/p?Access%5FToken=%3Credacted%3E",
		"https://example.test/path@x?q=1":                      "https://example.test/path@x?q=1",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

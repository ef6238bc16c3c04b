package connect

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// redacted replaces every secret in text shown to people: logs, errors, state callbacks.
const redacted = "REDACTED"

// redactURL returns u for display with the token query value replaced.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if q := c.Query(); q.Has("token") {
		q.Set("token", redacted)
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// redactString replaces each non-empty secret in s, also in its query-escaped form (a token
// echoed inside a URL by an HTTP client error).
func redactString(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		s = strings.ReplaceAll(s, sec, redacted)
		if esc := url.QueryEscape(sec); esc != sec {
			s = strings.ReplaceAll(s, esc, redacted)
		}
	}
	return s
}

// redactError wraps err so that its message never contains the secrets. Unwrap keeps
// errors.Is and errors.As working (a context deadline, a transport close status); the
// wrapped error's own message is not shown by anything in this package.
func redactError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := redactString(err.Error(), secrets...)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// maxPeerText bounds text from the peer quoted in errors and logs.
const maxPeerText = 200

// peerText makes text from the network fit for an error message: control characters
// become spaces and the length is bounded, so a hostile host cannot forge log lines.
func peerText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxPeerText {
		n := maxPeerText
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

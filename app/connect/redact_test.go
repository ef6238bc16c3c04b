package connect

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("ws://u:p@127.0.0.1:56500/ws?token=s3cr%2Bet&x=1")
	got := redactURL(u)
	if strings.Contains(got, "s3cr") || strings.Contains(got, "u:p") {
		t.Errorf("redactURL = %q leaks a secret", got)
	}
	if !strings.Contains(got, "token="+redacted) || !strings.Contains(got, "x=1") {
		t.Errorf("redactURL = %q", got)
	}
}

func TestRedactError(t *testing.T) {
	t.Parallel()
	const tok = "abc+/def"
	base := fmt.Errorf("Get \"ws://h/ws?token=%s\": %w", url.QueryEscape(tok), context.DeadlineExceeded)
	err := redactError(base, tok)
	if strings.Contains(err.Error(), "abc") {
		t.Errorf("redacted error %q still holds the token", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("redaction broke errors.Is")
	}
	plain := errors.New("nothing secret")
	if redactError(plain, tok) != plain {
		t.Error("an error without the secret should pass unchanged")
	}
	if redactError(nil, tok) != nil {
		t.Error("nil must stay nil")
	}
}

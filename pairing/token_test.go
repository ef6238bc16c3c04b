package pairing

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestNewTokenLengths(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]int{AccessTokenBytes: 43, WebSocketTokenBytes: 32, GrantIDBytes: 22} {
		tok := NewToken(n)
		if len(tok) != want || strings.ContainsAny(tok, "+/=") {
			t.Errorf("NewToken(%d) = %q, want %d base64url chars", n, tok, want)
		}
	}
	if a, b := NewToken(32), NewToken(32); a == b {
		t.Error("two tokens are equal")
	}
}

func TestHashToken(t *testing.T) {
	t.Parallel()
	// SHA-256("abc"), standard padded base64: the official host's secretHash format.
	const want = "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
	if got := HashToken("abc"); got != want {
		t.Fatalf("HashToken = %q, want %q", got, want)
	}
	if !TokenMatchesHash("abc", want) {
		t.Error("matching token rejected")
	}
	for _, tc := range []struct{ token, hash string }{
		{"abd", want},
		{"abc", "not base64!"},
		{"abc", base64.StdEncoding.EncodeToString([]byte("short"))},
		{"abc", ""},
	} {
		t.Run(tc.token+" "+tc.hash, func(t *testing.T) {
			t.Parallel()
			if TokenMatchesHash(tc.token, tc.hash) {
				t.Errorf("TokenMatchesHash(%q, %q) = true", tc.token, tc.hash)
			}
		})
	}
}

func TestEqualTokens(t *testing.T) {
	t.Parallel()
	if !EqualTokens("a-b_c", "a-b_c") || EqualTokens("a", "b") || EqualTokens("a", "ab") || EqualTokens("", "x") {
		t.Error("EqualTokens is wrong")
	}
}

func TestDecodeAccessToken(t *testing.T) {
	t.Parallel()
	tok := NewToken(AccessTokenBytes)
	for _, ok := range []string{tok, tok + "="} {
		if _, err := DecodeAccessToken(ok); err != nil {
			t.Errorf("DecodeAccessToken(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", NewToken(31), NewToken(33), strings.Repeat("*", 43)} {
		if _, err := DecodeAccessToken(bad); err == nil {
			t.Errorf("DecodeAccessToken(%q) accepted", bad)
		}
	}
}

// TestNewIDNeverLooksLikeAFlag: an id is typed on command lines, where a leading '-' is a
// flag; a token's first character is '-' or '_' once in 32 draws.
func TestNewIDNeverLooksLikeAFlag(t *testing.T) {
	t.Parallel()
	for range 2000 {
		id := NewID(GrantIDBytes)
		if id[0] == '-' || id[0] == '_' || len(id) != 22 {
			t.Fatalf("NewID = %q", id)
		}
	}
}

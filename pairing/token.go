package pairing

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
)

// Token sizes in random bytes. Encoded without padding, 32 bytes are 43 characters and 24
// bytes are 32 characters.
const (
	// AccessTokenBytes is the size of an invite secret and of an app's local-mode token.
	AccessTokenBytes = 32
	// WebSocketTokenBytes is the size of the single-use token that authorizes one upgrade.
	WebSocketTokenBytes = 24
	// GrantIDBytes is the size of a grant id and of a local grant's config suffix.
	GrantIDBytes = 16
)

// NewToken returns n bytes from crypto/rand encoded as unpadded base64url. It panics only if
// the system's random source fails, which crypto/rand documents as unrecoverable.
func NewToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("pairing: crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewID returns an identifier of n random bytes, as NewToken does, but never starting with
// '-' or '_': ids are typed as command-line arguments ('ansight pairing revoke ID'), where a
// leading '-' reads as a flag. It draws again in that case (1 time in 32), which costs the
// id under one bit of its randomness.
func NewID(n int) string {
	for {
		if id := NewToken(n); id[0] != '-' && id[0] != '_' {
			return id
		}
	}
}

// HashToken returns the stored form of a secret: standard, padded base64 of SHA-256 over
// the token's UTF-8 bytes, unsalted — the official host's format, so that stores stay
// comparable. Salt would add nothing: every secret here carries at least 192 random bits.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// TokenMatchesHash reports whether token hashes to hash, comparing the digests in
// constant time. A malformed hash never matches.
func TokenMatchesHash(token, hash string) bool {
	want, err := base64.StdEncoding.DecodeString(hash)
	if err != nil || len(want) != sha256.Size {
		return false
	}
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], want) == 1
}

// EqualTokens compares two secrets in time that depends only on their lengths.
func EqualTokens(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// DecodeAccessToken decodes a base64url access token (padding optional) and requires
// exactly AccessTokenBytes bytes, the check the official SDKs apply to invite secrets.
func DecodeAccessToken(token string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(token, "="))
	if err != nil {
		return nil, fmt.Errorf("pairing: access token is not base64url: %w", err)
	}
	if len(b) != AccessTokenBytes {
		return nil, fmt.Errorf("pairing: access token decodes to %d bytes, want %d", len(b), AccessTokenBytes)
	}
	return b, nil
}

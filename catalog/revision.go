package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"

	"github.com/go-json-experiment/json/jsontext"
)

// revisionPrefix starts every revision (docs/protocol/catalog.md#revisions).
const revisionPrefix = "sha256:"

// canonicalRevision returns the revision of a JSON value: "sha256:" + lower-case hex of
// SHA-256 over its RFC 8785 canonical form. compact is not modified.
func canonicalRevision(compact []byte) (string, error) {
	v := jsontext.Value(append([]byte(nil), compact...))
	if err := v.Canonicalize(); err != nil {
		return "", err
	}
	sum := sha256.Sum256(v)
	return formatRevision(sum[:]), nil
}

func formatRevision(sum []byte) string {
	b := make([]byte, len(revisionPrefix)+hex.EncodedLen(len(sum)))
	copy(b, revisionPrefix)
	hex.Encode(b[len(revisionPrefix):], sum)
	return string(b)
}

// hashWriter feeds a SHA-256 through a small buffer, for revisions whose canonical input is
// assembled from pre-encoded pieces (the catalog and availability revisions, which have a
// fixed shape with keys already in canonical order).
type hashWriter struct {
	h   hash.Hash
	buf []byte
}

func newHashWriter() *hashWriter {
	return &hashWriter{h: sha256.New(), buf: make([]byte, 0, 8192)}
}

func (w *hashWriter) write(b []byte) {
	if len(w.buf)+len(b) > cap(w.buf) {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
		if len(b) > cap(w.buf) {
			w.h.Write(b)
			return
		}
	}
	w.buf = append(w.buf, b...)
}

func (w *hashWriter) writeString(s string) {
	if len(w.buf)+len(s) > cap(w.buf) {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
	}
	if len(s) > cap(w.buf) {
		w.h.Write([]byte(s))
		return
	}
	w.buf = append(w.buf, s...)
}

func (w *hashWriter) revision() string {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
	var sum [sha256.Size]byte
	return formatRevision(w.h.Sum(sum[:0]))
}

// appendString appends s as a JSON string. jsontext's default escaping is exactly RFC 8785's
// (only '"', '\\' and control characters are escaped, with the short forms where JSON has
// them and lower-case \u00xx otherwise), so the result is canonical. Strings are checked
// for valid UTF-8 at registration; the error is returned for the rest.
func appendString(dst []byte, s string) ([]byte, error) {
	return jsontext.AppendQuote(dst, s)
}

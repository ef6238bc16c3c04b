package conformance

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// wrapperInfo is a gzip-base64-json wrapper as written.
type wrapperInfo struct {
	Encoding            string `json:"$ansightEncoding"`
	ContentType         string `json:"contentType"`
	OriginalByteCount   *int64 `json:"originalByteCount"`
	CompressedByteCount *int64 `json:"compressedByteCount"`
	Data                string `json:"data"`
}

// unwrapPayload returns the JSON a payload stands for and whether it was wrapped. The
// reading is the host's (wire.DecodePayload): the size rules are checked separately, by
// wrapperProblems and plainProblems, so that a payload that breaks them is still read.
func unwrapPayload(raw jsontext.Value) ([]byte, bool, error) {
	if raw.Kind() != '{' || !bytes.Contains(raw, []byte(`"$ansightEncoding"`)) {
		return raw, false, nil
	}
	body, err := wire.DecodePayload(raw, wire.DefaultMaxInflatedBytes)
	if err != nil {
		return nil, true, err
	}
	return body, !bytes.Equal(body, raw), nil
}

// wrapperProblems checks a compressed payload against docs/protocol/messages.md#decoding-a-payload: known encoding and
// content type, byte counts that match the data, an original of at least the threshold,
// and a wrapper strictly smaller than the original.
func wrapperProblems(raw jsontext.Value) []string {
	var w wrapperInfo
	if err := wire.Unmarshal(raw, &w); err != nil {
		return []string{fmt.Sprintf("the wrapper cannot be read: %v", err)}
	}
	var list []string
	if w.ContentType != "application/json" {
		list = append(list, fmt.Sprintf("contentType is %q, want \"application/json\"", w.ContentType))
	}
	gz, err := base64.StdEncoding.DecodeString(w.Data)
	if err != nil {
		return append(list, fmt.Sprintf("data is not standard base64: %v", err))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return append(list, fmt.Sprintf("data is not gzip: %v", err))
	}
	n, err := io.Copy(io.Discard, io.LimitReader(zr, wire.DefaultMaxInflatedBytes+1))
	if err != nil {
		return append(list, fmt.Sprintf("data does not inflate: %v", err))
	}
	if w.OriginalByteCount == nil || *w.OriginalByteCount != n {
		list = append(list, fmt.Sprintf("originalByteCount is %s, but the data inflates to %d bytes", countText(w.OriginalByteCount), n))
	}
	if w.CompressedByteCount == nil || *w.CompressedByteCount != int64(len(gz)) {
		list = append(list, fmt.Sprintf("compressedByteCount is %s, but the gzip data has %d bytes", countText(w.CompressedByteCount), len(gz)))
	}
	if n < wire.CompressionThreshold {
		list = append(list, fmt.Sprintf("a payload of %d bytes was compressed; only payloads of at least %d bytes may be", n, wire.CompressionThreshold))
	}
	if size := int64(len(compact(raw))); size >= n {
		list = append(list, fmt.Sprintf("the wrapper (%d bytes) is not smaller than the payload it wraps (%d bytes)", size, n))
	}
	return list
}

// plainProblems checks an uncompressed payload: one of at least the threshold must be
// wrapped when the wrapper is smaller. gzip output differs between implementations, so
// the app is faulted only when our wrapper would be clearly (10%) smaller.
func plainProblems(raw jsontext.Value) []string {
	c := compact(raw)
	if len(c) < wire.CompressionThreshold {
		return nil
	}
	enc, err := wire.EncodePayload(c)
	if err != nil || len(enc)*10 > len(c)*9 {
		return nil
	}
	return []string{fmt.Sprintf("a payload of %d bytes was sent uncompressed; its gzip-base64-json wrapper takes %d bytes", len(c), len(enc))}
}

func compact(raw jsontext.Value) []byte {
	c := bytes.Clone(raw)
	if err := (*jsontext.Value)(&c).Compact(); err != nil {
		return raw
	}
	return c
}

func countText(n *int64) string {
	if n == nil {
		return "missing"
	}
	return fmt.Sprint(*n)
}

package files

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// content is file bytes as a result carries them (files.read_file, files.download_file):
// UTF-8 text or base64, the other member null.
type content struct {
	ContentType string  `json:"contentType" jsonschema:"text or binary"`
	Encoding    string  `json:"encoding" jsonschema:"utf-8 or base64: how text or base64 holds the bytes"`
	Text        *string `json:"text" jsonschema:"the bytes as UTF-8 text, or null"`
	Base64      *string `json:"base64" jsonschema:"the bytes in standard base64, or null"`
}

// encode puts b into a result as requested: utf8 (refused when b is not UTF-8), base64, or
// auto — text when b is UTF-8 and either its MIME type is a text type or it holds no control
// byte but tab, CR and LF, else base64. The rule is the official SDKs', so a file reads the
// same from any SDK. A chunk of a text file may end inside a multi-byte character: a client
// paging text asks for base64.
func encode(b []byte, mime, requested string) (content, error) {
	text := func() content {
		s := string(b)
		return content{ContentType: "text", Encoding: "utf-8", Text: &s}
	}
	switch requested {
	case encodingUTF8:
		if !utf8.Valid(b) {
			return content{}, failure(reasonNotText, "The requested chunk is not valid UTF-8. Use 'base64' for binary-safe transfer.")
		}
		return text(), nil
	case encodingAuto:
		if looksLikeText(b, mime) {
			return text(), nil
		}
	}
	s := base64.StdEncoding.EncodeToString(b)
	return content{ContentType: "binary", Encoding: "base64", Base64: &s}, nil
}

// looksLikeText is the auto rule of encode.
func looksLikeText(b []byte, mime string) bool {
	if !utf8.Valid(b) {
		return false
	}
	if textMime(mime) {
		return true
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// textMime reports whether a MIME type is text-like: text/*, JSON, XML, YAML, NDJSON,
// JavaScript, SQL and the +json and +xml suffixes.
func textMime(mime string) bool {
	m := strings.ToLower(mime)
	switch m {
	case "application/json", "application/xml", "application/yaml", "application/x-ndjson", "application/javascript", "application/sql":
		return true
	}
	return strings.HasPrefix(m, "text/") || strings.HasSuffix(m, "+json") || strings.HasSuffix(m, "+xml")
}

package mcpbridge

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// App text is data, not instructions. What an app supplies — screen labels, results, log
// lines, error messages, remediation text, tool descriptions — reaches the model beside the
// user's words, and accessibility text is a known way into UI agents ("ignore previous
// instructions and…" in a label). The bridge cannot tell an app's malicious text from its
// honest text; it can make the boundary visible and unforgeable:
//
//   - every content item that carries app text is framed between untrustedOpen and
//     untrustedClose and marked in its _meta (MetaUntrusted), and the server's instructions
//     tell the agent that framed text is never an instruction;
//   - app text cannot close the frame early or open a second one: the tag name is escaped
//     wherever it occurs in it (in JSON with a \u escape, so the value is unchanged);
//   - invisible and direction-changing characters (format characters such as zero-width
//     spaces, bidi overrides and Unicode tags, line and paragraph separators, variation
//     selectors) are shown escaped (\u202e), so that nothing in the frame is hidden from a
//     reader; tool descriptions and schemas from apps are cleaned the same way.
//
// This is the one place that frames: the snapshot renderer, the call tools and exposed
// tools all call appText or appJSON.

// The frame around app text, and the _meta key set on framed content.
const (
	untrustedOpen  = "<untrusted-app-content>"
	untrustedClose = "</untrusted-app-content>"
	untrustedName  = "untrusted-app-content"
	// MetaUntrusted is the _meta key, set to true, of content whose text (or image) the app
	// supplied.
	MetaUntrusted = "ansight/untrusted"
)

// untrustedMeta marks content as the app's.
func untrustedMeta() mcp.Meta { return mcp.Meta{MetaUntrusted: true} }

// appText frames plain text that holds app text (a snapshot's lines): hidden characters
// shown escaped, the frame's name escaped wherever the text has it.
func appText(s string) *mcp.TextContent {
	return &mcp.TextContent{Text: untrustedOpen + "\n" + revealText(s) + "\n" + untrustedClose, Meta: untrustedMeta()}
}

// appJSON frames JSON text that holds app text. The escapes are JSON's own (\u003c,
// \u202e), so the framed text still decodes to the same value.
func appJSON(b []byte) *mcp.TextContent {
	var out strings.Builder // the text in one copy: a call's answer is framed on every call
	out.Grow(len(untrustedOpen) + len(b) + len(untrustedClose) + 2 + 16)
	out.WriteString(untrustedOpen + "\n")
	writeRevealedJSON(&out, b)
	out.WriteString("\n" + untrustedClose)
	return &mcp.TextContent{Text: out.String(), Meta: untrustedMeta()}
}

// appImage marks an image the app rendered.
func appImage(img *mcp.ImageContent) *mcp.ImageContent {
	img.Meta = untrustedMeta()
	return img
}

// Unframe returns the text inside the bridge's frame of app text (see MetaUntrusted), or
// text itself when it is not framed: for programs that read a result's text as JSON.
func Unframe(text string) string {
	inner, ok := strings.CutPrefix(text, untrustedOpen+"\n")
	if !ok {
		return text
	}
	inner, ok = strings.CutSuffix(inner, "\n"+untrustedClose)
	if !ok {
		return text
	}
	return inner
}

// hidden reports whether r is a character a reader cannot see or that changes how the
// text around it reads: format characters (Cf: zero-width spaces and joiners, bidi
// embeddings, overrides and isolates, Unicode tags, the byte order mark, soft hyphens),
// line and paragraph separators, variation selectors, and other non-printing characters
// but the space and the new line and tab that plain text uses.
func hidden(r rune) bool {
	if ' ' <= r && r <= '~' { // printable ASCII, most of any text: none is hidden
		return false
	}
	return hiddenRune(r)
}

// hiddenRune is hidden by the character tables, for every rune (TestHiddenASCII holds
// hidden's shortcut against it).
func hiddenRune(r rune) bool {
	switch {
	case r == ' ' || r == '\n' || r == '\t':
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r),
		unicode.Is(unicode.Variation_Selector, r), r == utf8.RuneError:
		return true
	}
	return !unicode.IsPrint(r) && !unicode.IsSpace(r) || unicode.IsControl(r)
}

// revealText shows hidden characters as \uXXXX (\UXXXXXXXX above the BMP) and escapes the
// frame's name, in plain text.
func revealText(s string) string {
	if !needsReveal(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		if at := nameAt(s, i); at > 0 {
			// "untrusted\u002dapp-content": no longer the frame's name.
			b.WriteString(s[i : i+len("untrusted")])
			b.WriteString(`\u002d`)
			i += len("untrusted-")
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if hidden(r) {
			if r == utf8.RuneError && size == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else if r > 0xFFFF {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// writeRevealedJSON writes JSON text b to out doing what revealText does, with JSON's
// escapes: hidden characters, <, > and & as \uXXXX (surrogate pairs above the BMP), and the
// frame's name with its first hyphen as \u002d. JSON text has such characters only inside
// strings, where an escape is the same character: the value is unchanged.
func writeRevealedJSON(out *strings.Builder, b []byte) {
	// b as a string without copying it: only read here, and out copies what it writes.
	s := unsafe.String(unsafe.SliceData(b), len(b))
	if !needsReveal(s) && !strings.ContainsAny(s, "<>&") {
		out.WriteString(s)
		return
	}
	for i := 0; i < len(s); {
		if at := nameAt(s, i); at > 0 {
			out.WriteString(s[i : i+len("untrusted")])
			out.WriteString(`\u002d`)
			i += len("untrusted-")
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '<' || r == '>' || r == '&' || hidden(r) && r != '\n' && r != '\t':
			if r > 0xFFFF {
				hi, lo := utf16Pair(r)
				fmt.Fprintf(out, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(out, `\u%04x`, r)
			}
		default:
			out.WriteString(s[i : i+size])
		}
		i += size
	}
}

// utf16Pair is r's surrogate pair.
func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + r>>10, 0xDC00 + r&0x3FF
}

// needsReveal reports whether s has anything revealText changes.
func needsReveal(s string) bool {
	for i, r := range s {
		if hidden(r) || (r == 'u' || r == 'U') && nameAt(s, i) > 0 {
			return true
		}
	}
	return false
}

// nameAt returns the length of the frame's name when s has it at i (in any case), else 0.
func nameAt(s string, i int) int {
	if len(s)-i >= len(untrustedName) && strings.EqualFold(s[i:i+len(untrustedName)], untrustedName) {
		return len(untrustedName)
	}
	return 0
}

// cleanDescription is an app's description (of a tool, or inside its schemas) with its
// hidden characters shown escaped: clients show descriptions to the model outside any
// frame.
func cleanDescription(s string) string { return revealText(s) }

// cleanSchemaText cleans every description and title inside a JSON Schema (cleanDescription:
// the hidden characters become visible escapes, so the value changes and clients that decode
// the schema see them too), leaving everything else as it is. A schema that does not decode
// is returned as is.
func cleanSchemaText(raw jsontext.Value) jsontext.Value {
	if !needsReveal(string(raw)) {
		return raw
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	annotation := false // the last token was the name "description" or "title"
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return raw
		}
		kind, length := dec.StackIndex(dec.StackDepth())
		isName := kind == '{' && length%2 == 1 && tok.Kind() == '"'
		if tok.Kind() == '"' && !isName && annotation {
			tok = jsontext.String(cleanDescription(tok.String()))
		}
		annotation = isName && (tok.String() == "description" || tok.String() == "title")
		if err := enc.WriteToken(tok); err != nil {
			return raw
		}
	}
	return bytes.TrimRight(out.Bytes(), "\n")
}

package label

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBytes bounds a label, in bytes.
const MaxBytes = 200

// ErrHidden is the refusal of a label that is not one line of visible text.
var ErrHidden = errors.New("a label is text on one line, without control or hidden characters")

// Check returns label trimmed of the spaces around it, or why it is not a label: longer
// than MaxBytes, not UTF-8, or holding a control or hidden character.
func Check(label string) (string, error) {
	label = strings.TrimSpace(label)
	if len(label) > MaxBytes {
		return "", fmt.Errorf("a label of %d bytes: at most %d", len(label), MaxBytes)
	}
	if !utf8.ValidString(label) || strings.ContainsFunc(label, hidden) {
		return "", ErrHidden
	}
	return label, nil
}

// hidden reports a control character, a format character (Cf: bidi embeddings, overrides
// and isolates, zero-width spaces and joiners, Unicode tags, soft hyphens) or a line or
// paragraph separator: in a terminal a bidi override reorders the line around it and a
// zero-width character makes two labels look alike. Emoji joined by a zero-width joiner are
// refused with them: a label is a name to tell sessions apart.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxFileNameBytes bounds a sanitized file name (most file systems allow 255).
const maxFileNameBytes = 120

// windowsReserved are device names Windows refuses as file names, with any extension.
var windowsReserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// sanitizeFileName turns an app-supplied file name into a plain name inside the artifact
// directory: only the last path element (either separator) is kept, and only letters,
// digits, '.', '-' and '_' survive (others become '_'); leading dots are dropped (no hidden
// files, no "." or ".."), the length is bounded and Windows device names are defused. An
// empty result becomes "artifact-<transferID>".
func sanitizeFileName(name, transferID string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		if r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	s = strings.TrimRight(s, ".") // Windows drops trailing dots
	if len(s) > maxFileNameBytes {
		ext := filepath.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		stem := s[:maxFileNameBytes-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		s = stem + ext
	}
	if s == "" {
		return "artifact-" + transferID
	}
	stem, _, _ := strings.Cut(s, ".")
	if windowsReserved[strings.ToUpper(stem)] {
		s = "_" + s
	}
	return s
}

// createUnique creates name in dir, or name-1, name-2… before the extension when it exists,
// never overwriting a file. The file is readable by the owner only.
func createUnique(dir, name string) (*os.File, string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if stem == "" {
		stem, ext = name, ""
	}
	for i := 0; i < 1000; i++ {
		candidate := name
		if i > 0 {
			candidate = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		path := filepath.Join(dir, candidate)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, path, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", fmt.Errorf("create artifact file: %w", err)
		}
	}
	return nil, "", fmt.Errorf("create artifact file: too many files named %q", name)
}

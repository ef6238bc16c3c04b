package recording

import "strings"

// detectLevel finds a log line's level in the forms SDKs and loggers write, looking only at
// the line's start (and slog's level= anywhere in its first 256 bytes):
//
//	time=… level=WARN msg=…          (slog's text handler; the Go SDK's form)
//	{"level":"warn",…}                (JSON loggers)
//	[Warning] …  or  WARN: …  or  2026-01-02T03:04:05Z ERROR …
//	W/Tag: …                          (Android logcat)
//
// A line with none of them is info.
func detectLevel(line string) Level {
	head := line
	if len(head) > 256 {
		head = head[:256]
	}
	if i := strings.Index(head, "level="); i >= 0 && (i == 0 || head[i-1] == ' ') {
		if l, ok := ParseLevel(word(head[i+len("level="):])); ok && l != 0 {
			return l
		}
	}
	if i := strings.Index(head, `"level":`); i >= 0 {
		rest := strings.TrimLeft(head[i+len(`"level":`):], ` "`)
		if l, ok := ParseLevel(word(rest)); ok && l != 0 {
			return l
		}
	}
	// Android: a single level letter, a slash, a tag.
	if len(head) > 2 && head[1] == '/' && strings.IndexByte("VDIWEFA", head[0]) >= 0 {
		l, _ := ParseLevel(head[:1])
		return l
	}
	// A level word at the start, or after words that carry digits (a date, a time, a
	// process id): "WARN x", "2026-01-02 10:00:00.123 DEBUG x".
	rest := head
	for range 4 {
		rest = strings.TrimLeft(rest, " \t")
		w := word(strings.TrimLeft(rest, "[<("))
		if len(w) > 1 { // single letters only count in the logcat form
			if l, ok := ParseLevel(w); ok && l != 0 {
				return l
			}
		}
		i := strings.IndexAny(rest, " \t")
		if i < 0 || !strings.ContainsAny(rest[:i], "0123456789") {
			break
		}
		rest = rest[i:]
	}
	return LevelInfo
}

// word returns s up to its first character that is not a letter.
func word(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c < 'a' || c > 'z' {
			return s[:i]
		}
	}
	return s
}

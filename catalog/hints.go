package catalog

import (
	"strconv"
	"strings"
	"time"
)

// Hints are what an app says about a tool in words of its keywords, where the protocol has
// no field: keywords are free text that every SDK publishes and every host passes on, so
// the hints cost other hosts nothing but a few more search words.
const (
	// HintAdditive marks a write tool that only adds (creates a note), never changes or
	// removes what exists: MCP clients are told it is not destructive.
	HintAdditive = "hint:additive"
	// HintIdempotent marks a tool that, called again with the same arguments, changes
	// nothing more (set dark mode on).
	HintIdempotent = "hint:idempotent"
	// HintDuration, followed by "=" and a number of seconds ("hint:duration=90"), says how
	// long a call of the tool may take: the host waits that long (plus a margin, within a
	// bound) before it gives up, instead of its default 20 s.
	HintDuration = "hint:duration"
)

// MaxHintDuration bounds a hint:duration: a larger number is read as this.
const MaxHintDuration = time.Hour

// ToolHints are the hints found in one tool's keywords.
type ToolHints struct {
	Additive, Idempotent bool
	// duration is hint:duration's, 0 when absent or unreadable.
	duration time.Duration
}

// Duration returns the tool's hint:duration and whether it has a usable one.
func (h ToolHints) Duration() (time.Duration, bool) { return h.duration, h.duration > 0 }

// ParseHints reads the hints in keywords (words separated by spaces, commas, tabs or new
// lines; case-insensitive). A hint:duration that is not a positive number of seconds is
// ignored; one above MaxHintDuration counts as MaxHintDuration. Keywords without "hint:"
// cost one scan and no allocation.
func ParseHints(keywords string) ToolHints {
	var h ToolHints
	if !containsFold(keywords, "hint:") {
		return h
	}
	for _, w := range strings.FieldsFunc(keywords, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' }) {
		name, value, hasValue := strings.Cut(w, "=")
		switch {
		case strings.EqualFold(name, HintAdditive) && !hasValue:
			h.Additive = true
		case strings.EqualFold(name, HintIdempotent) && !hasValue:
			h.Idempotent = true
		case strings.EqualFold(name, HintDuration) && hasValue:
			s, err := strconv.ParseFloat(value, 64)
			if err != nil || !(s > 0) { // NaN too
				continue
			}
			d := MaxHintDuration
			if s < MaxHintDuration.Seconds() {
				d = time.Duration(s * float64(time.Second))
			}
			h.duration = d
		}
	}
	return h
}

// containsFold reports whether s contains the lower-case ASCII word sub, in any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

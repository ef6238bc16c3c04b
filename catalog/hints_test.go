package catalog

import (
	"testing"
	"time"
)

// TestParseHints reads the hints an app may put in keywords.
func TestParseHints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		keywords             string
		additive, idempotent bool
		duration             time.Duration
	}{
		{keywords: ""},
		{keywords: "note add hint:additive", additive: true},
		{keywords: "hint:idempotent,theme", idempotent: true},
		{keywords: "HINT:ADDITIVE hint:idempotent", additive: true, idempotent: true},
		{keywords: "additive idempotent hint additive"},
		{keywords: "hint:additive-ish hint:idempotently"},
		{keywords: "hint:additive=yes"},
		{keywords: "export hint:duration=90", duration: 90 * time.Second},
		{keywords: "hint:duration=1.5,slow", duration: 1500 * time.Millisecond},
		{keywords: "Hint:Duration=30", duration: 30 * time.Second},
		{keywords: "hint:duration=99999999", duration: MaxHintDuration},
		{keywords: "hint:duration=0"},
		{keywords: "hint:duration=-5"},
		{keywords: "hint:duration=NaN"},
		{keywords: "hint:duration=5s"},
		{keywords: "hint:duration"},
		{keywords: "hint:durations=5"},
	} {
		t.Run(tc.keywords, func(t *testing.T) {
			t.Parallel()
			h := ParseHints(tc.keywords)
			d, ok := h.Duration()
			if h.Additive != tc.additive || h.Idempotent != tc.idempotent || d != tc.duration || ok != (tc.duration > 0) {
				t.Errorf("ParseHints(%q) = %+v (duration %v %v), want additive %v idempotent %v duration %v",
					tc.keywords, h, d, ok, tc.additive, tc.idempotent, tc.duration)
			}
		})
	}
}

// TestParseHintsNoAllocation: keywords without hints, the common case on the call path,
// cost no allocation.
func TestParseHintsNoAllocation(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { ParseHints("notes list read search") }); n != 0 {
		t.Fatalf("ParseHints allocates %v times for keywords without hints", n)
	}
}

package host

import (
	"testing"
	"time"
)

// TestParseDotNetTime: the forms the official host's DateTimeOffset.TryParse (invariant
// culture, AssumeUniversal) reads are read, in UTC; others are refused.
func TestParseDotNetTime(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-08-13T00:00:00Z", at("2026-08-13T00:00:00Z")},
		{"2026-08-13T00:00:00.1234567+00:00", at("2026-08-13T00:00:00.1234567Z")}, // .NET's own
		{"2026-08-13 00:00:00Z", at("2026-08-13T00:00:00Z")},                      // the issue's
		{"  2026-08-13 10:00:00 +02:00 ", at("2026-08-13T08:00:00Z")},
		{"2026-08-13T10:00:00+0200", at("2026-08-13T08:00:00Z")},
		{"2026-08-13T10:00:00-03", at("2026-08-13T13:00:00Z")},
		{"2026-08-13T10:00:00", at("2026-08-13T10:00:00Z")}, // no zone: UTC
		{"2026-08-13 10:00", at("2026-08-13T10:00:00Z")},
		{"2026-8-3 10:00:00", at("2026-08-03T10:00:00Z")},
		{"2026/08/13 10:00:00", at("2026-08-13T10:00:00Z")},
		{"2026-08-13", at("2026-08-13T00:00:00Z")},
		{"08/13/2026 10:00:00", at("2026-08-13T10:00:00Z")}, // month first
		{"8/13/2026 9:30:00 PM", at("2026-08-13T21:30:00Z")},
		{"Thu, 13 Aug 2026 00:00:00 GMT", at("2026-08-13T00:00:00Z")}, // RFC 1123
		{"13 Aug 2026 09:30 UTC", at("2026-08-13T09:30:00Z")},
		{"August 13, 2026 09:30:00", at("2026-08-13T09:30:00Z")},
		{"2026-08-13T00:00:00,5Z", at("2026-08-13T00:00:00.5Z")},
	} {
		if got, ok := parseDotNetTime(tc.in); !ok || !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("parseDotNetTime(%q) = %v, %v; want %v", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{"", "yesterday", "2026-13-01", "2026-08-13T25:00:00Z", "1755043200", "10:00", "2026-08-13T10:00:00 PST",
		"13/08/2026", "2026-08-13T10:00:00+25:00", string(make([]byte, 200))} {
		if got, ok := parseDotNetTime(in); ok {
			t.Errorf("parseDotNetTime(%q) = %v, want refused", in, got)
		}
	}
}

// FuzzParseDotNetTime: any text is read or refused without panicking; what is read is in
// UTC; every RFC 3339 time reads as the same instant.
func FuzzParseDotNetTime(f *testing.F) {
	for _, s := range []string{"2026-08-13 00:00:00Z", "2026-08-13T00:00:00.1234567+00:00", "Thu, 13 Aug 2026 00:00:00 GMT",
		"8/13/2026 9:30:00 PM", "2026-08-13", "utc", "GMTGMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseDotNetTime(s)
		if ok && got.Location() != time.UTC {
			t.Fatalf("%q read as %v, not UTC", s, got)
		}
		if want, err := time.Parse(time.RFC3339Nano, s); err == nil && (!ok || !got.Equal(want)) {
			t.Fatalf("RFC 3339 %q read as %v, %v; want %v", s, got, ok, want)
		}
	})
}

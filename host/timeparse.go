package host

import (
	"strings"
	"time"
)

// maxTimeText bounds the text parseDotNetTime reads.
const maxTimeText = 128

// parseDotNetTime reads a date-time as the official host does
// (DateTimeOffset.TryParse(s, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal)
// in its CrashReportReceiver), so that a crash report or annotation the official host keeps
// is kept here too: not only RFC 3339 but the forms the invariant culture reads —
//
//   - the date: 2006-01-02 or 2006/01/02 (months and days of one digit too), 01/02/2006
//     (month first), 2 Jan 2006, Jan 2, 2006, with or without a day name (Mon, 02 Jan 2006);
//   - then, after a T or a space, a time: 15:04, 15:04:05, with any fraction, or 3:04 PM,
//     3:04:05 PM;
//   - then a zone: Z, +07:00, +0700, +07 (with or without a space before it), GMT or UTC;
//     none is UTC (AssumeUniversal).
//
// A date alone is its midnight. The result is in UTC. Text longer than 128 bytes, a time
// without a date (which .NET takes as today) and anything else are refused.
func parseDotNetTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxTimeText {
		return time.Time{}, false
	}
	// GMT and UTC are the only zone names the invariant culture knows.
	for _, name := range []string{" GMT", " UTC", "GMT", "UTC"} {
		if len(s) > len(name) && strings.EqualFold(s[len(s)-len(name):], name) {
			s = s[:len(s)-len(name)] + "Z"
			break
		}
	}
	for _, layout := range dotNetLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// dotNetLayouts are the layouts parseDotNetTime tries, most common first (RFC 3339).
var dotNetLayouts = func() []string {
	dates := []string{"2006-01-02", "2006-1-2", "2006/01/02", "2006/1/2", "01/02/2006", "1/2/2006",
		"2 Jan 2006", "Mon, 2 Jan 2006", "Monday, 2 January 2006", "2 January 2006", "Jan 2, 2006", "January 2, 2006", "Jan 2 2006"}
	times := []string{"15:04:05", "15:04", "3:04:05 PM", "3:04 PM"}
	zones := []string{"Z07:00", "", " Z07:00", "-0700", " -0700", "-07", " -07"}
	out := []string{time.RFC3339Nano}
	for _, d := range dates {
		for _, sep := range []string{"T", " "} {
			for _, tm := range times {
				for _, z := range zones {
					out = append(out, d+sep+tm+z)
				}
			}
		}
		out = append(out, d)
	}
	return out
}()

package wire

import "time"

var timeUTC = time.UTC

// ts parses an RFC 3339 timestamp for test tables and returns it in UTC.
func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

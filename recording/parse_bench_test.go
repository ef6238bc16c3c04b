package recording

import (
	"testing"
	"time"
)

// BenchmarkParseText parses the official SDK's telemetry messages in turn, as the
// recorder's writer does for every message a session sends: its allocations are most of
// what a recording host leaves for the garbage collector.
func BenchmarkParseText(b *testing.B) {
	lines := officialLines(b)
	at := time.Unix(1, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		parser{}.text(lines[i%len(lines)], at)
	}
}

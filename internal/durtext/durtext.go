package durtext

import (
	"strings"
	"time"
)

// Format writes d as time.Duration.String does, without the zero minutes and seconds
// that follow a whole hour or minute: 10m, not 10m0s; 1h, not 1h0m0s.
func Format(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

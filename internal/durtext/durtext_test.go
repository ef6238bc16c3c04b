package durtext

import (
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		25 * time.Second:               "25s",
		1500 * time.Millisecond:        "1.5s",
		250 * time.Millisecond:         "250ms",
		10 * time.Minute:               "10m",
		90 * time.Minute:               "1h30m",
		time.Hour:                      "1h",
		time.Hour + time.Second:        "1h0m1s",
		2*time.Minute + 30*time.Second: "2m30s",
		0:                              "0s",
	} {
		if got := Format(d); got != want {
			t.Errorf("Format(%v) = %q, want %q", d, got, want)
		}
	}
}

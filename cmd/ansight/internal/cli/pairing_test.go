package cli

import (
	"testing"
	"time"
)

// TestParsePairingDuration: the official CLI's durations (days, weeks, months of 30 days)
// beside Go's, combined; anything else is refused.
func TestParsePairingDuration(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	for in, want := range map[string]time.Duration{
		"15m": 15 * time.Minute, "1h30m": 90 * time.Minute, "7d": 7 * day, "2w": 14 * day, "1mo": 30 * day,
		"1d12h": 36 * time.Hour, " 3mo ": 90 * day, "500ms": 500 * time.Millisecond,
		"": 0, "0m": 0, "3x": 0, "d": 0, "1.5h": 0, "-1h": 0, "1y": 0, "9999999999d": 0, "40000d": 0,
	} {
		got, err := parsePairingDuration(in)
		if want == 0 && err == nil || want != 0 && (err != nil || got != want) {
			t.Errorf("parsePairingDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestScreenshotFormat: the format follows -o's extension, agrees with --format, and a name
// that says nothing needs --format.
func TestScreenshotFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ format, output, want string }{
		{"", "", "png"}, {"", "a.png", "png"}, {"", "a.JPG", "jpeg"}, {"", "a.jpeg", "jpeg"}, {"jpeg", "", "jpeg"},
		{"png", "a.png", "png"}, {"png", "shot.img", "png"},
		{"jpeg", "a.png", ""}, {"", "a.bmp", ""}, {"gif", "", ""},
	} {
		got, err := screenshotFormat(c.format, c.output)
		if c.want == "" && err == nil || c.want != "" && got != c.want {
			t.Errorf("screenshotFormat(%q, %q) = %q, %v; want %q", c.format, c.output, got, err, c.want)
		}
	}
}

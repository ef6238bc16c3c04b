package host

import (
	"bytes"
	"log/slog"
	"runtime"
	"strings"
	"testing"
)

// TestFileLimit: Start raises the open-file limit as far as it may and judges it against
// MaxSessions; a bound the limit cannot hold is said in the log and in FileLimit.
func TestFileLimit(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no open-file limit to read here")
	}
	h := newHarness(t, nil)
	l := h.FileLimit()
	if l.Soft == 0 || l.Soft > l.Hard || l.Sessions != DefaultMaxSessions || l.Needed != DefaultMaxSessions+fileReserve {
		t.Fatalf("limit %+v", l)
	}
	if !l.Enough() || !strings.Contains(l.String(), "enough for 64 sessions") {
		t.Fatalf("the default bound is judged too high for %+v: %s", l, l)
	}

	var logs bytes.Buffer   // read once the server is closed: its goroutines are done
	huge := int(l.Hard) + 1 // beyond what this process may raise its limit to, unless privileged
	h2 := newHarness(t, func(o *Options) {
		o.MaxSessions = huge
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	l2 := h2.FileLimit()
	h2.Close()
	if l2.Soft >= uint64(l2.Needed) {
		t.Skipf("this process may raise its limit to %d: nothing is too low", l2.Soft)
	}
	if l2.Enough() || !strings.Contains(l2.String(), "too low") || !strings.Contains(logs.String(), "open-file limit is too low") {
		t.Fatalf("limit %s, log %q", l2, logs.String())
	}
}

package reliability

import (
	"strings"
	"testing"
	"time"
)

// TestRecordLoadSmall runs the recording load at a size that tests the harness, not the
// recorder: the senders in their child process, rounds off and on, every count reported.
func TestRecordLoadSmall(t *testing.T) {
	rep, err := RunRecordLoad(t.Context(), RecordLoadOptions{Sessions: 3, Messages: 20, Frames: 2, Calls: 20,
		Duration: 2 * time.Second, Rounds: 2, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	if rep.Sent == 0 || rep.SentFrames == 0 || rep.Records == 0 || rep.Off.Calls == 0 || rep.On.Calls == 0 || rep.P99Ratio <= 0 {
		t.Fatalf("%+v", rep)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"recording load: 3 sessions", "calls off", "calls on", "on/off", "0 dropped"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
}

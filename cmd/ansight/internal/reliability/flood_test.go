package reliability

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ansight-go/ansight/host"
)

// TestEnrollFloodSmall runs the whole flood harness at a size CI affords: the fleet in a
// child process of the test binary, every app answered and accepted, the flooder held to
// its budget.
func TestEnrollFloodSmall(t *testing.T) {
	rep := runFlood(t, FloodOptions{Apps: 50, Flooder: 50, Wait: time.Minute})
	if rep.InWindow+rep.Late != 50 || rep.FlooderSent != 50 || rep.FlooderAnswered == 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.Enrollment.Received != 100 {
		t.Errorf("the host read %d datagrams, want 100", rep.Enrollment.Received)
	}
}

// TestEnrollFlood is the full flood: 10,000 apps at once and a flooder
// (ANSIGHT_ENROLL_FLOOD=1; ANSIGHT_ENROLL_FLOOD_APPS overrides the size,
// ANSIGHT_ENROLL_FLOOD_FLOODER the flooder's datagrams, -1 for none,
// ANSIGHT_ENROLL_FLOOD_READ_BUFFER the host's socket buffer: bytes, -1 for the system's
// default).
func TestEnrollFlood(t *testing.T) {
	if os.Getenv("ANSIGHT_ENROLL_FLOOD") != "1" {
		t.Skip("set ANSIGHT_ENROLL_FLOOD=1 to run the enrollment flood")
	}
	opts := FloodOptions{Progress: func(p string) { t.Log(p) }}
	if s := os.Getenv("ANSIGHT_ENROLL_FLOOD_APPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ANSIGHT_ENROLL_FLOOD_APPS: %v", err)
		}
		opts.Apps = n
	}
	if s := os.Getenv("ANSIGHT_ENROLL_FLOOD_FLOODER"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ANSIGHT_ENROLL_FLOOD_FLOODER: %v", err)
		}
		opts.Flooder = n
	}
	if s := os.Getenv("ANSIGHT_ENROLL_FLOOD_READ_BUFFER"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ANSIGHT_ENROLL_FLOOD_READ_BUFFER: %v", err)
		}
		opts.Host = func(o *host.Options) { o.EnrollmentReadBuffer = n }
	}
	runFlood(t, opts)
}

func runFlood(t *testing.T, opts FloodOptions) *FloodReport {
	t.Helper()
	rep, err := RunEnrollFlood(t.Context(), opts)
	logAndCheck(t, rep, err)
	return rep
}

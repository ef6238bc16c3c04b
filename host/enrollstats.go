package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// EnrollmentStats counts what the enrollment socket received since Start and says what
// receive buffer the system granted it.
type EnrollmentStats struct {
	// Received datagrams were read from the socket; RateLimited of them were over their
	// sender's rate, QueueFull found the queue of datagrams to answer full (both dropped
	// unanswered); Answered ones got an ENROLLMENT_RESULT.
	Received    int64 `json:"received"`
	RateLimited int64 `json:"rateLimited"`
	QueueFull   int64 `json:"queueFull"`
	Answered    int64 `json:"answered"`
	// ReceiveBuffer is the socket's receive buffer as the system reports it (SO_RCVBUF), 0
	// when unknown; ReceiveBufferAsked what the host asked for (0: the system's default);
	// ReceiveBufferMax the most a process may ask for (Linux: net.core.rmem_max), 0 when
	// unknown. Linux grants twice what is asked, for its bookkeeping.
	ReceiveBuffer      int `json:"receiveBuffer"`
	ReceiveBufferAsked int `json:"receiveBufferAsked"`
	ReceiveBufferMax   int `json:"receiveBufferMax"`
}

// ReceiveBufferText describes the socket's receive buffer for people, with what to do when
// the system granted less than the host asked for.
func (e EnrollmentStats) ReceiveBufferText() string {
	if e.ReceiveBuffer == 0 {
		return "receive buffer unknown"
	}
	s := "receive buffer " + mib(e.ReceiveBuffer)
	var notes []string
	if e.ReceiveBufferAsked > 0 {
		notes = append(notes, "asked "+mib(e.ReceiveBufferAsked))
	} else {
		notes = append(notes, "the system's default")
	}
	if e.ReceiveBufferMax > 0 {
		notes = append(notes, "net.core.rmem_max "+mib(e.ReceiveBufferMax))
	}
	s += " (" + strings.Join(notes, "; ") + ")"
	if e.ReceiveBufferAsked > e.ReceiveBufferMax && e.ReceiveBufferMax > 0 {
		s += fmt.Sprintf("; the system capped it: sysctl -w net.core.rmem_max=%d grants all", e.ReceiveBufferAsked)
	}
	return s
}

func mib(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// EnrollmentStats returns the enrollment socket's counters (valid after Start).
func (s *Server) EnrollmentStats() EnrollmentStats {
	c := &s.enrollStats
	s.mu.Lock()
	buf := c.buffer
	s.mu.Unlock()
	buf.Received, buf.RateLimited, buf.QueueFull, buf.Answered = c.received.Load(), c.rateLimited.Load(), c.queueFull.Load(), c.answered.Load()
	return buf
}

// enrollCounters are the live counters behind EnrollmentStats.
type enrollCounters struct {
	received, rateLimited, queueFull, answered atomic.Int64
	buffer                                     EnrollmentStats // the buffer sizes, set at Start under s.mu
}

// receiveBufferMax is the most receive buffer a process may ask for (Linux), 0 when
// unknown.
func receiveBufferMax() int {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

package connect

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// stateLog collects OnState reports.
type stateLog struct {
	mu sync.Mutex
	s  []StateChange
}

func (l *stateLog) add(c StateChange) {
	l.mu.Lock()
	l.s = append(l.s, c)
	l.mu.Unlock()
}

func (l *stateLog) states() []State {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []State
	for _, c := range l.s {
		out = append(out, c.State)
	}
	return out
}

// The host drops every session right after the handshake: reconnects back off
// exponentially (jitter pinned to its minimum), and stopping ends the loop cleanly.
func TestRunReconnectsWithBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const sessions = 5
		var closers sync.WaitGroup
		d := &pipeDialer{newHost: func(n int) *controlHost {
			if n > sessions {
				return &controlHost{respond: answerAll} // stays up
			}
			h := &controlHost{respond: answerAll}
			closers.Go(func() {
				// Drop the connection once the handshake is over.
				for len(h.actions()) < 3 {
					time.Sleep(time.Millisecond)
				}
				h.conn.Close(transport.StatusGoingAway, "restart")
			})
			return h
		}}
		var log stateLog
		c := directConfig(t, Options{OnState: log.add, ReconnectDelay: time.Second, MaxReconnectDelay: 4 * time.Second})
		cl := newTestClient(c, d)
		cl.rand = func(int64) int64 { return 0 }
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- cl.run(ctx) }()
		for d.count() <= sessions {
			time.Sleep(time.Second)
		}
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run = %v, want nil after cancel", err)
		}
		closers.Wait()

		// Delays: half of 1, 2, 4, 4, 4 seconds (min jitter); each session lived 1 ms.
		want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
		for i := 1; i < len(d.times) && i <= len(want); i++ {
			gap := d.times[i].Sub(d.times[i-1]).Round(100 * time.Millisecond)
			if gap != want[i-1] {
				t.Errorf("gap before dial %d = %v, want %v", i+1, gap, want[i-1])
			}
		}
		states := log.states()
		if states[0] != StateConnecting || states[1] != StateConnected || states[2] != StateDisconnected || states[len(states)-1] != StateDisconnected {
			t.Errorf("states = %v", states)
		}
		last := log.s[len(log.s)-1]
		if last.Err != nil || last.ProcessSessionID != ProcessSessionID() {
			t.Errorf("final state = %+v, want a clean disconnect", last)
		}
		if log.s[2].Err == nil || transport.CloseStatus(log.s[2].Err) != transport.StatusGoingAway {
			t.Errorf("first disconnect err = %v, want the host's close", log.s[2].Err)
		}
		// Last session was stopped cleanly: session.complete was sent.
		if h := d.host(len(d.hosts) - 1); !slices.Contains(h.actions(), "session.complete") {
			t.Errorf("last session actions = %v, want session.complete", h.actions())
		}
	})
}

func TestRunStopsOnPermanentDirectRefusal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := &pipeDialer{
			newHost: func(int) *controlHost { return nil },
			err:     &transport.HandshakeError{StatusCode: http.StatusUnauthorized},
		}
		err := newTestClient(directConfig(t, Options{}), d).run(t.Context())
		if he, ok := errors.AsType[*transport.HandshakeError](err); !ok || he.StatusCode != 401 {
			t.Fatalf("run = %v, want the 401", err)
		}
		if d.count() != 1 {
			t.Errorf("dialled %d times, want 1", d.count())
		}
	})
}

func TestRunRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := &pipeDialer{
			newHost: func(n int) *controlHost {
				if n < 4 {
					return nil
				}
				return &controlHost{respond: answerAll}
			},
			err: errors.New("connection refused"),
		}
		connected := make(chan struct{})
		var once sync.Once
		c := directConfig(t, Options{OnState: func(s StateChange) {
			if s.State == StateConnected {
				once.Do(func() { close(connected) })
			}
		}})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- newTestClient(c, d).run(ctx) }()
		<-connected
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d.count() != 4 {
			t.Errorf("dialled %d times, want 4", d.count())
		}
	})
}

func TestRunCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := &pipeDialer{newHost: func(int) *controlHost { return nil }, err: errors.New("refused")}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		if err := newTestClient(directConfig(t, Options{}), d).run(ctx); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) != 10*time.Minute {
			t.Errorf("run returned after %v, want at the deadline", time.Since(start))
		}
		// Capped at 30 s: about 20+ attempts in 10 minutes, not thousands.
		if n := d.count(); n < 15 || n > 40 {
			t.Errorf("dialled %d times in 10 minutes", n)
		}
	})
}

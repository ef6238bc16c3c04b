package faultconn_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/faultconn"
	"github.com/ansight-go/ansight/transport/transporttest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestTransparent runs the Conn contract over a wrapper with an empty plan and with a plan
// whose rules never fire: the fault layer must be invisible then.
func TestTransparent(t *testing.T) {
	t.Parallel()
	plans := map[string]faultconn.Plan{
		"Empty":    {},
		"NoMatch":  {Rules: []faultconn.Rule{{Action: faultconn.Kill, Match: func(faultconn.Message) bool { return false }}}},
		"PassRule": {Rules: []faultconn.Rule{{Action: faultconn.Pass}}},
	}
	for name, plan := range plans {
		t.Run(name, func(t *testing.T) {
			transporttest.RunConnTests(t, func(t *testing.T, readLimit int64) (transport.Conn, transport.Conn) {
				a, b := transport.Pipe(transport.PipeOptions{ReadLimit: readLimit})
				fa, fb := faultconn.Wrap(a, plan), faultconn.Wrap(b, plan)
				t.Cleanup(func() { transporttest.CloseBoth(fa, fb) })
				return fa, fb
			})
		})
	}
}

// exchange sends m0..m(n-1) from one end of a pipe to the other, with the plan on the
// writing end (Outbound) or the reading end (Inbound), then closes the writer normally. It
// returns what the reader got, the errors of the writes and the reader's final error.
func exchange(t *testing.T, dir faultconn.Direction, n int, plan faultconn.Plan) (got []string, writeErrs []error, readErr error) {
	t.Helper()
	a, b := transport.Pipe(transport.PipeOptions{})
	var w, r transport.Conn = a, b
	var fc *faultconn.Conn
	if dir == faultconn.Outbound {
		fc = faultconn.Wrap(a, plan)
		w = fc
	} else {
		fc = faultconn.Wrap(b, plan)
		r = fc
	}
	defer r.Close(transport.StatusNormalClosure, "")
	for i := range n {
		writeErrs = append(writeErrs, w.Write(context.Background(), transport.MessageText, fmt.Appendf(nil, "m%d", i)))
	}
	w.Close(transport.StatusNormalClosure, "")
	for {
		_, data, err := r.Read(context.Background())
		if err != nil {
			return got, writeErrs, err
		}
		got = append(got, string(data))
	}
}

func TestActions(t *testing.T) {
	t.Parallel()
	type rules = []faultconn.Rule
	all := []string{"m0", "m1", "m2", "m3", "m4"}
	tests := []struct {
		name  string
		rules rules
		want  []string
	}{
		{"None", nil, all},
		{"DropAt", rules{{Match: faultconn.At(1, 3), Action: faultconn.Drop}}, []string{"m0", "m2", "m4"}},
		{"DropTimes", rules{{Times: 2, Action: faultconn.Drop}}, []string{"m2", "m3", "m4"}},
		{"DropFrom", rules{{Match: faultconn.From(3), Action: faultconn.Drop}}, []string{"m0", "m1", "m2"}},
		{"DropContains", rules{{Match: faultconn.Contains("m3"), Action: faultconn.Drop}}, []string{"m0", "m1", "m2", "m4"}},
		{"DropBinaryOnly", rules{{Match: faultconn.OfType(transport.MessageBinary), Action: faultconn.Drop}}, all},
		{"PassExempts", rules{{Match: faultconn.At(0), Action: faultconn.Pass}, {Action: faultconn.Drop}}, []string{"m0"}},
		{"TruncateKeep", rules{{Match: faultconn.At(2), Action: faultconn.Truncate, Keep: 1}}, []string{"m0", "m1", "m", "m3", "m4"}},
		{"TruncateHalf", rules{{Match: faultconn.At(2), Action: faultconn.Truncate}}, []string{"m0", "m1", "m", "m3", "m4"}},
		{"TruncateKeepAll", rules{{Match: faultconn.At(2), Action: faultconn.Truncate, Keep: 99}}, all},
		{"Duplicate", rules{{Match: faultconn.At(0, 4), Action: faultconn.Duplicate}}, []string{"m0", "m0", "m1", "m2", "m3", "m4", "m4"}},
		{"Reorder", rules{{Match: faultconn.At(1), Action: faultconn.Reorder}}, []string{"m0", "m2", "m1", "m3", "m4"}},
		{"ReorderWhileHeld", rules{{Match: faultconn.At(1, 2), Action: faultconn.Reorder}}, []string{"m0", "m2", "m1", "m3", "m4"}},
		{"ReorderPairs", rules{{Match: faultconn.At(0, 2), Action: faultconn.Reorder}}, []string{"m1", "m0", "m3", "m2", "m4"}},
		{"ReorderLastIsLost", rules{{Match: faultconn.At(4), Action: faultconn.Reorder}}, []string{"m0", "m1", "m2", "m3"}},
		{"ReorderThenDuplicate", rules{{Match: faultconn.At(1), Action: faultconn.Reorder}, {Match: faultconn.At(2), Action: faultconn.Duplicate}}, []string{"m0", "m2", "m2", "m1", "m3", "m4"}},
		{"DelayZero", rules{{Match: faultconn.At(1), Action: faultconn.Delay}}, all},
	}
	for _, tt := range tests {
		for _, dir := range []faultconn.Direction{faultconn.Outbound, faultconn.Inbound} {
			t.Run(tt.name+"/"+dir.String(), func(t *testing.T) {
				got, writeErrs, readErr := exchange(t, dir, 5, faultconn.Plan{Rules: tt.rules})
				if !slices.Equal(got, tt.want) {
					t.Errorf("reader got %q, want %q", got, tt.want)
				}
				if transport.CloseStatus(readErr) != transport.StatusNormalClosure {
					t.Errorf("reader ended with %v, want the normal closure", readErr)
				}
				for i, err := range writeErrs {
					if err != nil {
						t.Errorf("write %d: %v", i, err)
					}
				}
			})
		}
	}
}

func TestDirectionFilter(t *testing.T) {
	t.Parallel()
	for _, dir := range []faultconn.Direction{faultconn.Outbound, faultconn.Inbound} {
		t.Run(fmt.Sprint(dir), func(t *testing.T) {
			t.Parallel()
			other := faultconn.Both &^ dir
			got, _, _ := exchange(t, dir, 3, faultconn.Plan{Rules: []faultconn.Rule{{Direction: other, Action: faultconn.Drop}}})
			if len(got) != 3 {
				t.Errorf("%v rule applied to %v traffic: got %q", other, dir, got)
			}
		})
	}
}

func TestKill(t *testing.T) {
	t.Parallel()
	t.Run("Outbound", func(t *testing.T) {
		got, writeErrs, readErr := exchange(t, faultconn.Outbound, 5, faultconn.Plan{Rules: []faultconn.Rule{{Match: faultconn.At(2), Action: faultconn.Kill}}})
		// What was written before the kill arrives; then the peer sees an abnormal close.
		if !slices.Equal(got, []string{"m0", "m1"}) {
			t.Errorf("reader got %q, want m0 m1", got)
		}
		if transport.CloseStatus(readErr) != transport.StatusAbnormalClosure {
			t.Errorf("reader ended with %v, want StatusAbnormalClosure", readErr)
		}
		for i, err := range writeErrs {
			if want := i >= 2; want != (transport.CloseStatus(err) == transport.StatusAbnormalClosure) {
				t.Errorf("write %d = %v", i, err)
			}
		}
	})
	t.Run("Inbound", func(t *testing.T) {
		a, b := transport.Pipe(transport.PipeOptions{})
		fb := faultconn.Wrap(b, faultconn.Plan{Rules: []faultconn.Rule{{Match: faultconn.At(1), Action: faultconn.Kill}}})
		defer a.Close(transport.StatusNormalClosure, "")
		mustWrite(t, a, "m0")
		mustWrite(t, a, "m1")
		mustRead(t, fb, "m0")
		for range 2 { // the killed end keeps reporting the abnormal close
			if _, _, err := fb.Read(context.Background()); transport.CloseStatus(err) != transport.StatusAbnormalClosure {
				t.Fatalf("killed Read = %v, want StatusAbnormalClosure", err)
			}
		}
		if err := fb.Write(context.Background(), transport.MessageText, []byte("x")); transport.CloseStatus(err) != transport.StatusAbnormalClosure {
			t.Fatalf("Write after kill = %v", err)
		}
		if _, _, err := a.Read(context.Background()); transport.CloseStatus(err) != transport.StatusAbnormalClosure {
			t.Fatalf("peer Read = %v, want StatusAbnormalClosure", err)
		}
		if err := fb.Close(transport.StatusNormalClosure, ""); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Close after kill = %v, want ErrClosed", err)
		}
	})
	t.Run("WebSocket", func(t *testing.T) {
		client, server := transporttest.NewLoopbackPair(t, transporttest.Options{})
		fc := faultconn.Wrap(client, faultconn.Plan{Rules: []faultconn.Rule{{Match: faultconn.Contains("die"), Action: faultconn.Kill}}})
		mustWrite(t, fc, "hello")
		mustRead(t, server, "hello")
		if err := fc.Write(context.Background(), transport.MessageText, []byte("die")); transport.CloseStatus(err) != transport.StatusAbnormalClosure {
			t.Fatalf("killing Write = %v", err)
		}
		if _, _, err := server.Read(context.Background()); transport.CloseStatus(err) != transport.StatusAbnormalClosure {
			t.Fatalf("server Read = %v, want StatusAbnormalClosure", err)
		}
	})
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	plan := func(seed uint64) faultconn.Plan {
		return faultconn.Plan{Seed: seed, Rules: []faultconn.Rule{
			{Probability: 0.2, Action: faultconn.Drop},
			{Probability: 0.1, Action: faultconn.Duplicate},
			{Probability: 0.1, Action: faultconn.Reorder},
		}}
	}
	run := func(seed uint64) ([]string, []faultconn.Event) {
		a, b := transport.Pipe(transport.PipeOptions{Queue: 1000})
		fa := faultconn.Wrap(a, plan(seed))
		for i := range 200 {
			mustWrite(t, fa, fmt.Sprintf("m%d", i))
		}
		fa.Close(transport.StatusNormalClosure, "")
		var got []string
		for {
			_, data, err := b.Read(context.Background())
			if err != nil {
				break
			}
			got = append(got, string(data))
		}
		b.Close(transport.StatusNormalClosure, "")
		return got, fa.Events()
	}
	got1, ev1 := run(7)
	got2, ev2 := run(7)
	if !slices.Equal(got1, got2) || !slices.Equal(ev1, ev2) {
		t.Fatal("the same seed gave different faults")
	}
	got3, _ := run(8)
	if slices.Equal(got1, got3) {
		t.Error("different seeds gave the same faults")
	}
	counts := map[faultconn.Action]int{}
	for _, e := range ev1 {
		counts[e.Action]++
	}
	for _, a := range []faultconn.Action{faultconn.Drop, faultconn.Duplicate, faultconn.Reorder} {
		if counts[a] == 0 || counts[a] > 100 {
			t.Errorf("%v fired %d times in 200 messages", a, counts[a])
		}
	}
}

func TestDirectionsDrawIndependently(t *testing.T) {
	t.Parallel()
	// The faults on writes must not depend on how reads interleave with them.
	plan := faultconn.Plan{Seed: 3, Rules: []faultconn.Rule{{Probability: 0.5, Action: faultconn.Drop}}}
	outbound := func(interleave bool) []faultconn.Event {
		a, b := transport.Pipe(transport.PipeOptions{Queue: 100})
		defer transporttest.CloseBoth(a, b)
		fa := faultconn.Wrap(a, plan)
		// A canceled context makes a Pipe read return what is queued, or nothing, at once.
		drained, cancel := context.WithCancel(context.Background())
		cancel()
		for i := range 40 {
			mustWrite(t, b, "in") // inbound traffic for fa
			if interleave {
				fa.Read(drained)
			}
			mustWrite(t, fa, fmt.Sprint(i))
		}
		var out []faultconn.Event
		for _, e := range fa.Events() {
			if e.Direction == faultconn.Outbound {
				out = append(out, e)
			}
		}
		return out
	}
	if !slices.Equal(outbound(false), outbound(true)) {
		t.Fatal("outbound faults changed with inbound traffic")
	}
}

func TestDelay(t *testing.T) {
	t.Parallel()
	for _, dir := range []faultconn.Direction{faultconn.Outbound, faultconn.Inbound} {
		t.Run(dir.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := transport.Pipe(transport.PipeOptions{})
				plan := faultconn.Plan{Rules: []faultconn.Rule{{Match: faultconn.At(1), Action: faultconn.Delay, Delay: 3 * time.Second}}}
				var w, r transport.Conn = a, b
				if dir == faultconn.Outbound {
					w = faultconn.Wrap(a, plan)
				} else {
					r = faultconn.Wrap(b, plan)
				}
				start := time.Now()
				go func() {
					for i := range 3 {
						w.Write(context.Background(), transport.MessageText, fmt.Appendf(nil, "m%d", i))
					}
				}()
				// m0 at once; m1 after the delay; m2 right behind it (a delayed write holds
				// back the ones after it, and so does a delayed read).
				wantAt := []time.Duration{0, 3 * time.Second, 3 * time.Second}
				for i, want := range wantAt {
					mustRead(t, r, fmt.Sprintf("m%d", i))
					if got := time.Since(start); got != want {
						t.Errorf("m%d read after %v, want %v", i, got, want)
					}
				}
				transporttest.CloseBoth(w, r)
			})
		})
	}
}

func TestCloseInterruptsDelay(t *testing.T) {
	t.Parallel()
	a, b := transport.Pipe(transport.PipeOptions{})
	defer b.Close(transport.StatusNormalClosure, "")
	fa := faultconn.Wrap(a, faultconn.Plan{Rules: []faultconn.Rule{{Action: faultconn.Delay, Delay: time.Hour}}})
	errc := make(chan error)
	go func() { errc <- fa.Write(context.Background(), transport.MessageText, []byte("slow")) }()
	fa.Close(transport.StatusNormalClosure, "")
	if err := <-errc; !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("delayed Write after Close = %v, want ErrClosed", err)
	}
	// A context ending also cuts a delay short.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fb := faultconn.Wrap(b, faultconn.Plan{Rules: []faultconn.Rule{{Action: faultconn.Delay, Delay: time.Hour}}})
	if err := fb.Write(ctx, transport.MessageText, []byte("slow")); !errors.Is(err, context.Canceled) {
		t.Fatalf("delayed Write with a canceled context = %v", err)
	}
}

func TestConcurrentWritersWithFaults(t *testing.T) {
	t.Parallel()
	const writers, each = 4, 50
	a, b := transport.Pipe(transport.PipeOptions{})
	fa := faultconn.Wrap(a, faultconn.Plan{Rules: []faultconn.Rule{{Action: faultconn.Duplicate}}})
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if err := fa.Write(context.Background(), transport.MessageBinary, []byte("x")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 2 * writers * each {
		if _, _, err := b.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if n := len(fa.Events()); n != writers*each {
		t.Fatalf("%d events, want %d", n, writers*each)
	}
	transporttest.CloseBoth(fa, b)
}

func TestEvents(t *testing.T) {
	t.Parallel()
	a, b := transport.Pipe(transport.PipeOptions{})
	defer transporttest.CloseBoth(a, b)
	fa := faultconn.Wrap(a, faultconn.Plan{Rules: []faultconn.Rule{
		{Direction: faultconn.Outbound, Match: faultconn.At(1), Action: faultconn.Drop},
		{Direction: faultconn.Inbound, Action: faultconn.Truncate, Keep: 2},
	}})
	mustWrite(t, fa, "zero")
	mustWrite(t, fa, "one")
	mustWrite(t, b, "hello")
	mustRead(t, fa, "he")
	want := []faultconn.Event{
		{Direction: faultconn.Outbound, Index: 1, Type: transport.MessageText, Size: 3, Rule: 0, Action: faultconn.Drop},
		{Direction: faultconn.Inbound, Index: 0, Type: transport.MessageText, Size: 5, Rule: 1, Action: faultconn.Truncate},
	}
	if got := fa.Events(); !slices.Equal(got, want) {
		t.Fatalf("Events = %+v, want %+v", got, want)
	}
}

func mustWrite(t *testing.T, c transport.Conn, s string) {
	t.Helper()
	if err := c.Write(context.Background(), transport.MessageText, []byte(s)); err != nil {
		t.Fatalf("Write(%q): %v", s, err)
	}
}

func mustRead(t *testing.T, c transport.Conn, want string) {
	t.Helper()
	_, got, err := c.Read(context.Background())
	if err != nil || string(got) != want {
		t.Fatalf("Read = %q, %v; want %q", got, err, want)
	}
}

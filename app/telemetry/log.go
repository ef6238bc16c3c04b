package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
)

// maxLogLine bounds one forwarded line.
const maxLogLine = 16 << 10

// Handler returns an slog.Handler that forwards every record at opts.Level or above
// (slog.LevelInfo when opts is nil) to the host as a client.log line in slog's text form,
// and passes every record to next as well (next may be nil). Forwarding never blocks:
// a line that does not fit the queue is dropped and counted.
func (t *Telemetry) Handler(next slog.Handler, opts *slog.HandlerOptions) slog.Handler {
	var o slog.HandlerOptions
	if opts != nil {
		o = *opts
	}
	w := &lineWriter{t: t}
	return &handler{fwd: slog.NewTextHandler(w, &o), next: next}
}

// handler tees records to the forwarding text handler and to next.
type handler struct {
	fwd  slog.Handler
	next slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.fwd.Enabled(ctx, l) || h.next != nil && h.next.Enabled(ctx, l)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next != nil && h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r.Clone())
	}
	if h.fwd.Enabled(ctx, r.Level) {
		h.fwd.Handle(ctx, r) // the line writer never fails
	}
	return err
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := &handler{fwd: h.fwd.WithAttrs(as)}
	if h.next != nil {
		n.next = h.next.WithAttrs(as)
	}
	return n
}

func (h *handler) WithGroup(name string) slog.Handler {
	n := &handler{fwd: h.fwd.WithGroup(name)}
	if h.next != nil {
		n.next = h.next.WithGroup(name)
	}
	return n
}

// lineWriter receives the text handler's output: one Write per record.
type lineWriter struct{ t *Telemetry }

func (w *lineWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimRight(p, "\n"))
	if len(line) > maxLogLine {
		line = line[:maxLogLine] + "…"
	}
	w.t.tail.add(line)
	select {
	case w.t.logs <- line:
	default:
		w.t.logsDropped.Add(1)
	}
	return len(p), nil
}

// LogTail returns up to n of the most recent forwarded log lines, oldest first (all that
// are kept when n <= 0).
func (t *Telemetry) LogTail(n int) []string { return t.tail.last(n) }

// tail is a ring of the last lines.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
	next  int
}

func (r *tail) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < r.max {
		r.lines = append(r.lines, s)
		return
	}
	r.lines[r.next] = s
	r.next = (r.next + 1) % r.max
}

func (r *tail) last(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
	if n > 0 && n < len(all) {
		all = all[len(all)-n:]
	}
	return all
}

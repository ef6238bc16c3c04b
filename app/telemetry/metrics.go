package telemetry

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/transport"
)

// Runtime metric channels. Channel 0 is the official SDKs' channel of the managed
// runtime's memory (".NET" there); 1–3 are theirs too (native memory, RSS, FPS), so the
// Go-specific channels start at 10.
const (
	ChannelHeap       = 0
	ChannelGoroutines = 10
	ChannelGCPause    = 11
)

// metricChannel is one CLIENT_METRIC_CHANNELS entry.
type metricChannel struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Color  string `json:"color"`
	Unit   string `json:"unit,omitzero"`
	Type   string `json:"type,omitzero"`
	Source string `json:"source,omitzero"`
	Group  string `json:"group,omitzero"`
	Kind   string `json:"kind,omitzero"`
}

var runtimeChannels = []metricChannel{
	{ID: ChannelHeap, Name: "Go heap", Color: "#5C2D90", Unit: "bytes", Type: "memory", Source: "runtime", Group: "Go runtime", Kind: "gauge"},
	{ID: ChannelGoroutines, Name: "Goroutines", Color: "#007AFF", Unit: "count", Type: "custom", Source: "runtime", Group: "Go runtime", Kind: "gauge"},
	{ID: ChannelGCPause, Name: "GC pause", Color: "#C88C1E", Unit: "us", Type: "custom", Source: "runtime", Group: "Go runtime", Kind: "counter"},
}

type channelsMessage struct {
	Source    string          `json:"source"`
	Type      string          `json:"type"`
	SentAtUTC string          `json:"sentAtUtc"`
	Channels  []metricChannel `json:"channels"`
}

type sample struct {
	Channel       int    `json:"channel"`
	Value         int64  `json:"value"`
	CapturedAtUTC string `json:"capturedAtUtc"`
}

type metricsMessage struct {
	Source    string   `json:"source"`
	Type      string   `json:"type"`
	SentAtUTC string   `json:"sentAtUtc"`
	Metrics   []sample `json:"metrics"`
}

// sampler reads the runtime's figures: live heap bytes, goroutines, and the GC pause time
// since the previous sample (microseconds).
type sampler struct {
	m         []metrics.Sample
	lastPause time.Duration
	gc        debug.GCStats
}

func newSampler() *sampler {
	s := &sampler{m: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines:goroutines"}}}
	debug.ReadGCStats(&s.gc)
	s.lastPause = s.gc.PauseTotal
	return s
}

func (s *sampler) read(now time.Time) []sample {
	metrics.Read(s.m)
	heap, gor := int64(0), int64(runtime.NumGoroutine())
	if s.m[0].Value.Kind() == metrics.KindUint64 {
		heap = int64(s.m[0].Value.Uint64())
	}
	if s.m[1].Value.Kind() == metrics.KindUint64 {
		gor = int64(s.m[1].Value.Uint64())
	}
	s.gc.Pause = s.gc.Pause[:0]
	debug.ReadGCStats(&s.gc)
	pause := s.gc.PauseTotal - s.lastPause
	s.lastPause = s.gc.PauseTotal
	at := utc(now)
	return []sample{{ChannelHeap, heap, at}, {ChannelGoroutines, gor, at}, {ChannelGCPause, pause.Microseconds(), at}}
}

// sampleMetrics declares the runtime channels once per session, then sends a sample of
// each every MetricsInterval.
func (t *Telemetry) sampleMetrics(ctx context.Context, link Link) {
	b, err := json.Marshal(channelsMessage{Source: "client", Type: "CLIENT_METRIC_CHANNELS", SentAtUTC: utc(time.Now()), Channels: runtimeChannels})
	if err != nil || send(ctx, link, transport.MessageText, b) != nil {
		return
	}
	s := newSampler()
	tick := time.NewTicker(t.opts.MetricsInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			samples := s.read(now)
			b, err := json.Marshal(metricsMessage{Source: "client", Type: "CLIENT_METRICS", SentAtUTC: utc(now), Metrics: samples})
			if err != nil {
				continue
			}
			if send(ctx, link, transport.MessageText, b) == nil {
				t.samplesSent.Add(int64(len(samples)))
			}
		}
	}
}

package bench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// artifactTool streams a generated file of a requested size over ASFT (the demo app's).
const artifactTool = "files.generate"

// Heap metrics sampled during transfers. Live bytes (as of the last collection) are what a
// transfer that buffered the artifact would make grow with its size; in-use bytes add the
// garbage not yet collected, which the collector's pacing bounds whatever the size.
var heapMetrics = []string{"/gc/heap/live:bytes", "/memory/classes/heap/objects:bytes"}

// heapGrowth is the peak growth of the heap during a transfer.
type heapGrowth struct{ live, inUse int64 }

// heapSampler records the peaks of heapMetrics while it runs.
type heapSampler struct {
	stop       chan struct{}
	wg         sync.WaitGroup
	base, peak [2]uint64
}

// sampleHeap collects garbage, then samples the heap every millisecond until done.
func sampleHeap() *heapSampler {
	runtime.GC()
	h := &heapSampler{stop: make(chan struct{})}
	h.base = readHeap()
	h.peak = h.base
	h.wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.record()
			}
		}
	})
	return h
}

func (h *heapSampler) record() {
	now := readHeap()
	for i := range now {
		h.peak[i] = max(h.peak[i], now[i])
	}
}

// done stops sampling and returns the peak growth above the heap at the start.
func (h *heapSampler) done() heapGrowth {
	close(h.stop)
	h.wg.Wait()
	h.record()
	return heapGrowth{live: int64(h.peak[0] - h.base[0]), inUse: int64(h.peak[1] - h.base[1])}
}

func readHeap() [2]uint64 {
	s := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	var out [2]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			out[i] = s[i].Value.Uint64()
		}
	}
	return out
}

// artifact measures an ASFT artifact of ArtifactBytes against a raw binary stream of the same
// bytes in messages of the same size over the same kind of connection, written to a file in
// the same directory; and, in process, the heap's peak growth during the transfer against
// that of a transfer an eighth the size (flat memory gives a ratio near 1).
func (r *run) artifact(ctx context.Context, s session) error {
	generate := func(size int64) wire.Call {
		return wire.Call{ToolID: artifactTool, Arguments: jsontext.Value(fmt.Sprintf(`{"sizeBytes":%d,"pattern":"zeros","fileName":"bench.bin"}`, size))}
	}
	transfer := func(size int64) (time.Duration, heapGrowth, error) {
		var heap *heapSampler
		if r.local {
			heap = sampleHeap()
		}
		start := time.Now()
		out, err := s.call(ctx, generate(size))
		d := time.Since(start)
		var grew heapGrowth
		if heap != nil {
			grew = heap.done()
		}
		if err == nil && out.artifactBytes != size {
			err = fmt.Errorf("bench: %s: received %d of %d bytes", artifactTool, out.artifactBytes, size)
		}
		return d, grew, err
	}
	stream := func(size int64) (time.Duration, heapGrowth, error) {
		var heap *heapSampler
		if r.local {
			heap = sampleHeap()
		}
		start := time.Now()
		err := r.echo.receiveStream(ctx, size, wire.DefaultChunkSize)
		d := time.Since(start)
		var grew heapGrowth
		if heap != nil {
			grew = heap.done()
		}
		return d, grew, err
	}

	size, small := r.opts.ArtifactBytes, max(1, r.opts.ArtifactBytes/8)
	if _, _, err := transfer(small); err != nil { // warm up
		return err
	}
	if _, _, err := stream(small); err != nil {
		return err
	}
	var rate, baseRate []float64
	var heap, baseHeap, smallHeap heapGrowth
	peak := func(a, b heapGrowth) heapGrowth { return heapGrowth{max(a.live, b.live), max(a.inUse, b.inUse)} }
	for range r.opts.Rounds {
		d, grew, err := transfer(size)
		if err != nil {
			return err
		}
		rate, heap = append(rate, megabytesPerSecond(size, d)), peak(heap, grew)
		d, grew, err = stream(size)
		if err != nil {
			return err
		}
		baseRate, baseHeap = append(baseRate, megabytesPerSecond(size, d)), peak(baseHeap, grew)
		if r.local {
			// As many small transfers as make one large: both sides move the same bytes
			// through as many collections, so that the peaks compare like with like (a
			// peak over more collections is higher, whatever the size).
			for range size / small {
				if _, grew, err = transfer(small); err != nil {
					return err
				}
				smallHeap = peak(smallHeap, grew)
			}
		}
	}
	name := sizeName(size) + " artifact"
	r.report.add(Figure{Group: "artifact", Name: name + ", throughput", Unit: UnitMBPerSec,
		Value: median(rate), Baseline: "raw WebSocket stream, same chunks", BaselineValue: median(baseRate),
		Target: r.target(AtLeast, 0.7),
		Note:   fmt.Sprintf("%d-byte chunks into a file on both sides; from the call to the last byte on disk; median of %d", wire.DefaultChunkSize, r.opts.Rounds)})
	if !r.local {
		r.report.skip("artifact memory", "the host runs in another process")
		return nil
	}
	// Growth below 1 MiB is noise of the allocator and the collector's timing: flat either way.
	floor := int64(1 << 20)
	r.report.add(Figure{Group: "artifact", Name: name + ", peak live heap growth", Unit: UnitBytes,
		Value: float64(max(heap.live, floor)), Baseline: sizeName(small) + " artifact's", BaselineValue: float64(max(smallHeap.live, floor)),
		Target: r.target(AtMost, 2),
		Note: fmt.Sprintf("host and app together, sampled every ms, floored at 1 MiB (%.1f%% of the artifact's size); "+
			"heap in use, garbage included, peaked %s above the start (%s for the %s artifact, %s for the raw stream)",
			100*float64(heap.live)/float64(size), formatValue(float64(heap.inUse), UnitBytes),
			formatValue(float64(smallHeap.inUse), UnitBytes), sizeName(small), formatValue(float64(baseHeap.inUse), UnitBytes))})
	return nil
}

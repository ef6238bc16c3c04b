package bench

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// largeResultTool returns a compressible JSON result of a requested size (the demo app's).
const largeResultTool = "data.large_result"

// largeResult measures a call whose result is LargeResultBytes of JSON, sent compressed
// (gzip-base64-json), against echoing the same number of wire bytes; and the wire bytes
// against the result's own size.
func (r *run) largeResult(ctx context.Context, s session) error {
	call := wire.Call{ToolID: largeResultTool, Arguments: jsontext.Value(fmt.Sprintf(`{"sizeBytes":%d}`, r.opts.LargeResultBytes))}
	m, err := r.callAndEcho(ctx, s, call)
	if err != nil {
		return err
	}
	rs, err := r.alternate(ctx, r.opts.LargeResults, 1, m.op, m.floor)
	if err != nil {
		return err
	}
	p, fl := &rs.ops[0], &rs.ops[1]
	size := sizeName(int64(r.opts.LargeResultBytes))
	r.report.add(Figure{Group: "payload", Name: size + " result, call", Unit: UnitMicros,
		Value: micros(p.lat.percentile(50)), Baseline: "floor: coder/websocket echo of the wire bytes", BaselineValue: micros(fl.lat.percentile(50)),
		Note: fmt.Sprintf("median of %d; the app compresses the result, the host inflates and decodes it; CPU per call %s against the floor's %s",
			len(p.lat), formatValue(median(p.cpu), UnitCPUMicros), formatValue(median(fl.cpu), UnitCPUMicros))})
	r.report.add(Figure{Group: "payload", Name: size + " result, wire bytes", Unit: UnitBytes,
		Value: float64(m.respSize), Baseline: "result JSON", BaselineValue: float64(len(m.payload)),
		Note: "the response message as the protocol's codec writes it (gzip-base64-json above 32 KiB)"})
	return nil
}

// sizeName renders a byte count as "64 MiB", "1 MiB", "256 KiB" or "100 B".
func sizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

package player

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// A session the player has seen nothing of live — another fleet host's, one from an
// earlier run of the host, an imported one — has its traffic and its latest frame in its
// recording: the Traffic page and the Live screen read them from there (Traffic.Source,
// the X-Ansight-Frame-Source header say so) rather than showing an empty page.

// recordedTraffic is the last entries of a session's recorded tool traffic, oldest first.
func (p *Player) recordedTraffic(ctx context.Context, id string) ([]TrafficEntry, error) {
	page, err := p.backend.Records(ctx, id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordTraffic},
		Newest: true, Limit: p.opts.TrafficPerSession})
	if err != nil {
		return nil, err
	}
	out := make([]TrafficEntry, 0, len(page.Records))
	for _, r := range page.Records {
		var d struct {
			TrafficEntry
			Direction string `json:"direction"`
		}
		if json.Unmarshal(r.Data, &d) != nil {
			continue
		}
		e := d.TrafficEntry
		e.Seq, e.SessionID, e.At, e.Kind = r.Seq, id, r.At, d.Direction
		out = append(out, e)
	}
	slices.Reverse(out)
	return out, nil
}

// traffic answers a session's traffic log: the live one, else the recorded one.
func (p *Player) trafficPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t := &Traffic{Schema: SchemaTraffic, SessionID: id, Capacity: p.opts.TrafficPerSession, Entries: p.trafficOf(id), Source: "live"}
	if len(t.Entries) == 0 {
		if rec, err := p.recordedTraffic(r.Context(), id); err == nil && len(rec) > 0 {
			t.Entries, t.Source = rec, "recording"
		} else if err != nil && wire.CodeOf(err) == wire.CodeNotSupported {
			respond(w, nil, err) // it stays on its host: say so
			return
		}
	}
	respond(w, t, nil)
}

// recordedFrame serves a session's latest recorded frame.
func (p *Player) recordedFrame(w http.ResponseWriter, r *http.Request) bool {
	id := r.PathValue("id")
	page, err := p.backend.Records(r.Context(), id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordFrame}, Newest: true, Limit: 1})
	if err != nil || len(page.Records) == 0 || page.Records[0].Blob == "" {
		return false
	}
	b, err := p.backend.Blob(r.Context(), id, page.Records[0].Seq)
	if err != nil {
		return false
	}
	defer b.Body.Close()
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Ansight-Frame-Source", "recording")
	if b.SizeBytes > 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(b.SizeBytes, 10))
	}
	io.Copy(w, b.Body)
	return true
}

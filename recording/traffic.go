package recording

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// trafficEntries records one event of a session's tool traffic: the exchange's figures
// (sizes, duration, outcome) as data, and its payload inline when small, else as the
// record's file. A finished transfer also yields an artifact record whose file is the
// received file, linked (or copied) into the recordings directory; staged says ev.Path is
// the recorder's own link of it (RecordTraffic), moved into place.
func trafficEntries(ev wire.TrafficEvent, staged bool) []entry {
	o := object{
		{"direction", quoted(string(ev.Kind))},
		{"type", quoted(ev.Type)},
	}
	add := func(name string, v jsontext.Value) { o = append(o, member{name, v}) }
	if ev.RequestID != "" {
		add("requestId", quoted(ev.RequestID))
	}
	if ev.Origin != "" {
		add("origin", quoted(clip(ev.Origin, maxTextBytes)))
	}
	if len(ev.ToolIDs) > 0 {
		ids := []byte{'['}
		for i, id := range ev.ToolIDs {
			if i > 0 {
				ids = append(ids, ',')
			}
			ids, _ = jsontext.AppendQuote(ids, id)
		}
		add("toolIds", append(ids, ']'))
	}
	add("bytes", jsonNumber(float64(ev.Bytes)))
	add("payloadBytes", jsonNumber(float64(ev.PayloadBytes)))
	add("encodedBytes", jsonNumber(float64(ev.EncodedBytes)))
	if ev.Compressed {
		add("compressed", jsontext.Value("true"))
	}
	if ev.Duration > 0 {
		add("durationMs", jsonNumber(float64(ev.Duration.Microseconds())/1000))
	}
	add("outcome", quoted(ev.Outcome))
	if ev.ErrorCode != "" {
		add("errorCode", quoted(clip(ev.ErrorCode, maxTextBytes)))
	}
	if ev.Kind == wire.TrafficTransfer {
		add("transferId", quoted(ev.TransferID))
		add("fileName", quoted(ev.FileName))
		add("mimeType", quoted(ev.MimeType))
		add("receivedBytes", jsonNumber(float64(ev.ReceivedBytes)))
		add("sizeBytes", jsonNumber(float64(ev.SizeBytes)))
		add("frames", jsonNumber(float64(ev.Frames)))
	}
	e := entry{kind: KindTraffic, at: ev.At, text: clip(trafficSummary(ev), maxTextBytes)}
	if ev.Duration > 0 {
		e.value = float64(ev.Duration.Microseconds()) / 1000
	}
	if len(ev.Payload) > 0 {
		if len(ev.Payload) <= maxInlineBytes && ev.Payload.IsValid() {
			add("payload", compact(ev.Payload))
		} else {
			e.blob, e.ext = ev.Payload, "json"
		}
	}
	e.data = o.encode()
	out := []entry{e}
	if ev.Kind == wire.TrafficTransfer && ev.Outcome == wire.TrafficOK && ev.Path != "" {
		meta := object{{"transferId", quoted(ev.TransferID)}, {"fileName", quoted(ev.FileName)},
			{"mimeType", quoted(ev.MimeType)}, {"sizeBytes", jsonNumber(float64(ev.ReceivedBytes))}}
		if ev.RequestID != "" {
			meta = append(meta, member{"requestId", quoted(ev.RequestID)})
		}
		out = append(out, entry{kind: KindArtifact, at: ev.At, text: clip(ev.FileName, maxTextBytes), data: meta.encode(),
			link: ev.Path, owned: staged, ext: artifactExt(ev.FileName)})
	}
	return out
}

// trafficSummary is "tool.call notes.count ok", "tool.result notes.count error not_found".
func trafficSummary(ev wire.TrafficEvent) string {
	parts := []string{ev.Type}
	if len(ev.ToolIDs) > 0 {
		parts = append(parts, strings.Join(ev.ToolIDs, ","))
	}
	if ev.FileName != "" {
		parts = append(parts, ev.FileName)
	}
	parts = append(parts, ev.Outcome)
	if ev.ErrorCode != "" {
		parts = append(parts, ev.ErrorCode)
	}
	if ev.Kind == wire.TrafficDenied {
		parts = append([]string{"denied"}, parts...)
	}
	return strings.Join(parts, " ")
}

// artifactExt keeps a plain extension of an artifact's name ("png"), else "bin".
func artifactExt(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || len(name)-i-1 > 8 || i == len(name)-1 {
		return "bin"
	}
	ext := strings.ToLower(name[i+1:])
	for _, c := range ext {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return "bin"
		}
	}
	return ext
}

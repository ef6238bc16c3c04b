package recording

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// Message types of app telemetry (docs/protocol/session.md#telemetry).
const (
	TypeLog            = "CLIENT_LOG"
	TypeDone           = "CLIENT_DONE"
	TypeMetricChannels = "CLIENT_METRIC_CHANNELS"
	TypeMetrics        = "CLIENT_METRICS"
	TypeEvents         = "CLIENT_EVENTS"
	TypeTouchInput     = "CLIENT_TOUCH_INPUT"
	TypeNetworkRequest = "CLIENT_NETWORK_REQUEST"
	TypeVisualTree     = "CLIENT_VISUAL_TREE"
	TypeAppState       = "CLIENT_APP_STATE"
	TypeJPEG           = "CLIENT_JPEG"
	TypeDeviceProfile  = "DeviceAppProfile"
)

// TouchSchema is the schema of CLIENT_TOUCH_INPUT batches.
const TouchSchema = "ansight.touches.v1"

// parser turns app messages into entries. Every input is the app's, read off the network:
// nothing in it is trusted, every loop is bounded, and a message that cannot be read is
// kept (bounded) as a KindMessage record rather than lost.
type parser struct {
	// keepRaw honours a network record's redactSensitiveData:false.
	keepRaw bool
}

// text parses one text message that was neither a tool response nor a control request.
func (p parser) text(data []byte, arrival time.Time) []entry {
	obj, err := parseObject(data)
	if err != nil {
		return []entry{unreadable(data, arrival, err)}
	}
	typ, _ := str(obj.get("type"))
	at := timeOr(obj.get("sentAtUtc"), arrival)
	switch typ {
	case TypeLog:
		line, _ := str(obj.get("data"))
		return []entry{logEntry(line, obj, at)}
	case TypeDone:
		return []entry{{kind: KindState, at: at, text: "done", data: obj.encode()}}
	case TypeMetricChannels:
		return p.channels(obj, at)
	case TypeMetrics:
		return p.metrics(obj, at)
	case TypeEvents:
		return p.events(obj, at)
	case TypeTouchInput:
		if s, _ := str(obj.get("schema")); s != TouchSchema {
			return []entry{verbatim(typ, obj, data, arrival, "unsupported touch schema "+quote(s))}
		}
		return touches(obj, arrival)
	case TypeNetworkRequest:
		return p.network(typ, obj, data, arrival)
	case TypeVisualTree:
		return p.tree(typ, obj, data, arrival)
	case TypeAppState:
		if e, ok := appState(obj, arrival); ok {
			return []entry{e}
		}
	case TypeDeviceProfile:
		return []entry{profile(obj, arrival)}
	case TypeJPEG:
		if e, ok := jpegText(obj, arrival); ok {
			return []entry{e}
		}
	}
	return []entry{verbatim(typ, obj, data, arrival, "")}
}

// binary parses one binary message that was not a tool transfer frame: a live screen
// frame (ASJP); anything else is noted without its bytes.
func (p parser) binary(data []byte, arrival time.Time) []entry {
	f, err := wire.ParseASJP(data)
	if err != nil {
		magic := ""
		if len(data) >= 4 {
			magic = strings.ToValidUTF8(string(data[:4]), "?")
		}
		o := object{{"binary", jsontext.Value("true")}, {"bytes", jsonNumber(float64(len(data)))},
			{"magic", quoted(magic)}, {"error", quoted(err.Error())}}
		return []entry{{kind: KindMessage, at: arrival, text: "binary " + magic, data: o.encode()}}
	}
	return []entry{frameEntry(f, arrival)}
}

// frameEntry is a live frame's record; the JPEG becomes the record's file.
func frameEntry(f wire.ASJPFrame, arrival time.Time) entry {
	at := f.CapturedAt
	if at.UnixMilli() <= 0 {
		at = arrival
	}
	o := object{
		{"source", quoted("ASJP")},
		{"format", jsonNumber(float64(f.Format))},
		{"quality", jsonNumber(float64(f.Quality))},
		{"width", jsonNumber(float64(f.Width))},
		{"height", jsonNumber(float64(f.Height))},
		{"flags", jsonNumber(float64(f.Flags))},
	}
	if visible, known := f.KeyboardVisible(); known {
		o = append(o, member{"keyboardVisible", jsontext.Value(fmt.Sprint(visible))})
	}
	return entry{kind: KindFrame, at: at, text: fmt.Sprintf("%dx%d", f.Width, f.Height), data: o.encode(),
		blob: f.JPEG, ext: "jpg"}
}

// unreadable keeps a message that is not a JSON object: its bytes (bounded) are the file.
func unreadable(data []byte, arrival time.Time, err error) entry {
	o := object{{"error", quoted(err.Error())}, {"bytes", jsonNumber(float64(len(data)))}}
	raw := data
	if len(raw) > maxVerbatim {
		raw = raw[:maxVerbatim]
		o = append(o, member{"truncated", jsontext.Value("true")})
	}
	return entry{kind: KindMessage, at: arrival, text: "unreadable message", data: o.encode(), blob: raw, ext: "txt"}
}

// verbatim keeps a message of no known type (or one whose shape is not the known one) as
// it came, up to maxVerbatim bytes.
func verbatim(typ string, obj object, data []byte, arrival time.Time, note string) entry {
	text := typ
	if text == "" {
		text = "message without a type"
	}
	if note != "" {
		text += ": " + note
	}
	e := entry{kind: KindMessage, at: arrival, text: clip(text, maxTextBytes)}
	if len(data) <= maxVerbatim {
		e.data = obj.encode()
	} else {
		e.data = object{{"type", quoted(typ)}, {"bytes", jsonNumber(float64(len(data)))}, {"truncated", jsontext.Value("true")}}.encode()
	}
	return e
}

// timeOr reads a date-time member, falling back to def.
func timeOr(v jsontext.Value, def time.Time) time.Time {
	if t, ok := parseTime(v); ok {
		return t
	}
	return def
}

// logEntry makes a log record of one line; obj is what carried it.
func logEntry(line string, obj object, at time.Time) entry {
	if line == "" {
		line = "<empty>"
	}
	if len(line) > maxLogLineBytes {
		line = clip(line, maxLogLineBytes)
		obj = obj.set("data", quoted(line))
	}
	return entry{kind: KindLog, at: at, level: detectLevel(line), text: clip(line, maxTextBytes), data: obj.encode()}
}

// items returns the members of an array member, at most maxItemsPerMsg.
func items(obj object, name string) []jsontext.Value {
	v := obj.get(name)
	if v.Kind() != '[' {
		return nil
	}
	var out []jsontext.Value
	if unmarshalChecked(v, &out) != nil {
		return nil
	}
	if len(out) > maxItemsPerMsg {
		out = out[:maxItemsPerMsg]
	}
	return out
}

// channels: one record per declared channel with a byte id and a name (as the official
// host, others are skipped).
func (p parser) channels(obj object, at time.Time) []entry {
	var out []entry
	for _, it := range items(obj, "channels") {
		ch, err := members(it)
		if err != nil {
			continue
		}
		id, ok := integer(ch.get("id"), 0, 255)
		name, _ := str(ch.get("name"))
		if !ok || strings.TrimSpace(name) == "" {
			continue
		}
		out = append(out, entry{kind: KindChannel, at: at, channel: int(id), hasChan: true,
			text: clip(strings.TrimSpace(name), maxTextBytes), data: ch.encode()})
	}
	return out
}

// metrics: one record per sample with a byte channel and a numeric value.
func (p parser) metrics(obj object, at time.Time) []entry {
	var out []entry
	for _, it := range items(obj, "metrics") {
		m, err := members(it)
		if err != nil {
			continue
		}
		ch, ok := integer(m.get("channel"), 0, 255)
		if !ok {
			ch, ok = integer(m.get("channelId"), 0, 255)
		}
		v, vok := num(m.get("value"))
		if !ok || !vok {
			continue
		}
		out = append(out, entry{kind: KindMetric, at: timeOr(m.get("capturedAtUtc"), at), channel: int(ch), hasChan: true,
			value: v, data: m.encode()})
	}
	return out
}

// events: one record per event with a label.
func (p parser) events(obj object, at time.Time) []entry {
	var out []entry
	for _, it := range items(obj, "events") {
		ev, err := members(it)
		if err != nil {
			continue
		}
		label, _ := str(ev.get("label"))
		if strings.TrimSpace(label) == "" {
			continue
		}
		e := entry{kind: KindEvent, at: timeOr(ev.get("capturedAtUtc"), at), text: clip(strings.TrimSpace(label), maxTextBytes),
			data: ev.encode()}
		if ch, ok := integer(ev.get("channel"), 0, 255); ok {
			e.channel, e.hasChan = int(ch), true
		} else if ch, ok := integer(ev.get("channelId"), 0, 255); ok {
			e.channel, e.hasChan = int(ch), true
		}
		out = append(out, e)
	}
	return out
}

// touchActions names the action codes of ansight.touches.v1 rows.
var touchActions = []string{"down", "move", "up", "cancel", "unknown", "hoverEnter", "hoverMove", "hoverExit"}

// touches unpacks an ansight.touches.v1 batch: one record per row, at t0 + deltaMs, with
// the row's columns named, its id (the batch's ids, when it has them) and the batch's
// shared members (space, unit, surface and any other) beside the raw row.
func touches(obj object, arrival time.Time) []entry {
	t0 := timeOr(obj.get("t0"), arrival)
	shared := obj.without("rows").without("type").without("schema").without("ids").without("savedAtUtc")
	ids := items(obj, "ids")
	var out []entry
	for i, it := range items(obj, "rows") {
		var row []jsontext.Value
		if it.Kind() != '[' || unmarshalChecked(it, &row) != nil || len(row) < 5 {
			continue
		}
		delta, ok1 := integer(row[0], 0, 1<<40)
		action, ok2 := integer(row[1], 0, 255)
		pointer, ok3 := integer(row[2], -1<<31, 1<<31)
		x, ok4 := num(row[3])
		y, ok5 := num(row[4])
		if !(ok1 && ok2 && ok3 && ok4 && ok5) {
			continue
		}
		name := "unknown"
		if int(action) < len(touchActions) {
			name = touchActions[action]
		}
		o := object{
			{"deltaMs", jsonNumber(float64(delta))},
			{"action", quoted(name)},
			{"actionCode", jsonNumber(float64(action))},
			{"pointerId", jsonNumber(float64(pointer))},
			{"x", jsonNumber(x)},
			{"y", jsonNumber(y)},
		}
		if len(row) > 5 {
			if v, ok := integer(row[5], 0, 1<<31); ok {
				o = append(o, member{"pointerIndex", jsonNumber(float64(v))})
			}
		}
		if len(row) > 6 {
			if v, ok := integer(row[6], 0, 1<<31); ok {
				o = append(o, member{"pointerCount", jsonNumber(float64(v))})
			}
		}
		if i < len(ids) && ids[i].Kind() == '"' {
			o = append(o, member{"id", ids[i]})
		}
		o = append(o, shared...)
		o = append(o, member{"row", it})
		out = append(out, entry{kind: KindTouch, at: t0.Add(time.Duration(delta) * time.Millisecond),
			text: fmt.Sprintf("%s #%d (%g, %g)", name, pointer, x, y), data: o.encode()})
	}
	return out
}

// network keeps one request record, sanitised. A record of another schema is not stored
// (the official host drops it too): its member names are not known, so its secrets could
// not be found.
func (p parser) network(typ string, obj object, data []byte, arrival time.Time) []entry {
	req, err := members(obj.get("request"))
	if err != nil {
		return []entry{{kind: KindMessage, at: arrival, text: typ + ": no request object",
			data: object{{"type", quoted(typ)}, {"bytes", jsonNumber(float64(len(data)))}}.encode()}}
	}
	if s, _ := str(req.get("schema")); s != NetworkSchema {
		return []entry{{kind: KindMessage, at: arrival, text: clip(typ+": unsupported schema "+quote(s), maxTextBytes),
			data: object{{"type", quoted(typ)}, {"schema", quoted(clip(s, 128))}, {"bytes", jsonNumber(float64(len(data)))}}.encode()}}
	}
	req = sanitizeNetwork(req, p.keepRaw)
	e := entry{kind: KindNetwork, at: timeOr(req.get("startedAtUtc"), timeOr(obj.get("sentAtUtc"), arrival)),
		text: networkSummary(req), data: req.encode()}
	if d, ok := num(req.get("durationMilliseconds")); ok {
		e.value = d
	}
	return []entry{e}
}

// tree keeps a visual-tree snapshot: the payload is the record's file, the other members
// its data.
func (p parser) tree(typ string, obj object, data []byte, arrival time.Time) []entry {
	payload := obj.get("payload")
	if payload.Kind() != '{' {
		return []entry{verbatim(typ, obj, data, arrival, "no payload object")}
	}
	meta := obj.without("payload").without("type")
	if meta.get("nodeCount") == nil { // the SDKs' touch trees carry it in the tree alone
		if tree, err := members(payload); err == nil {
			if n, ok := integer(tree.get("nodeCount"), 0, 1<<31-1); ok {
				meta = append(meta, member{"nodeCount", jsonNumber(float64(n))})
			}
		}
	}
	source, _ := str(obj.get("source"))
	text := source
	if id, ok := str(obj.get("snapshotId")); ok && id != "" {
		text += " " + id
	}
	return []entry{{kind: KindTree, at: timeOr(obj.get("capturedAtUtc"), arrival), text: clip(strings.TrimSpace(text), maxTextBytes),
		data: meta.encode(), blob: compact(payload), ext: "json"}}
}

// appState reads {state, changedAtUtc}; an unknown state is not a state change.
func appState(obj object, arrival time.Time) (entry, bool) {
	s, _ := str(obj.get("state"))
	switch s = lower(s); s {
	case "foreground", "background", "unknown":
	default:
		return entry{}, false
	}
	return entry{kind: KindAppState, at: timeOr(obj.get("changedAtUtc"), arrival), text: s, data: obj.encode()}, true
}

// profile keeps a device profile verbatim; Text summarises the SDK, OS and model.
func profile(obj object, arrival time.Time) entry {
	at := arrival
	if ms, ok := integer(obj.get("sentAt"), 1, 1<<53); ok {
		at = time.UnixMilli(ms).UTC()
	}
	var parts []string
	for _, path := range [][2]string{{"sdk", "name"}, {"sdk", "version"}, {"device", "osName"}, {"device", "osVersion"}, {"device", "model"}} {
		if sub, err := members(obj.get(path[0])); err == nil {
			if s, ok := str(sub.get(path[1])); ok && s != "" {
				parts = append(parts, s)
			}
		}
	}
	return entry{kind: KindProfile, at: at, text: clip(strings.Join(parts, " "), maxTextBytes), data: obj.encode()}
}

// jpegText reads a legacy CLIENT_JPEG text frame: base64 JPEG and its description.
func jpegText(obj object, arrival time.Time) (entry, bool) {
	b64, ok := str(obj.get("base64"))
	if !ok || b64 == "" {
		return entry{}, false
	}
	img, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		if img, err = base64.RawStdEncoding.DecodeString(b64); err != nil {
			return entry{}, false
		}
	}
	meta := obj.without("base64").without("type").set("source", quoted(TypeJPEG))
	w, _ := integer(obj.get("width"), 0, 1<<31-1)
	h, _ := integer(obj.get("height"), 0, 1<<31-1)
	return entry{kind: KindFrame, at: timeOr(obj.get("capturedAtUtc"), arrival), text: fmt.Sprintf("%dx%d", w, h),
		data: meta.encode(), blob: img, ext: "jpg"}, true
}

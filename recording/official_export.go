package recording

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire/uitree"
)

// official writes the official host's session archive, entry by entry as its import reads
// one (official.go; ../shared/reference/official-ui-tests-archives.md §5): session.json
// (ansight.session-capture.v2, its bulky arrays empty, the frames listed), the logs,
// telemetry and touches documents, one file per network request and per visual tree (with
// their index), the frames at session-images/<frameId>.jpg, artifacts under artifacts/,
// and what the official format has no place for as our own records under
// artifacts/ansight-go/ (extensionDir).
func (x *exporter) official(w io.Writer, sum Summary) error {
	zw := zip.NewWriter(w)
	o := &officialWriter{x: x, zw: zw, sum: sum}
	for _, step := range []func() error{o.artifacts, o.extension, o.logs, o.telemetry, o.touches, o.requests, o.trees, o.frames,
		o.events, o.session} {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	if x.san != nil {
		if err := x.writeReport(zw); err != nil {
			return err
		}
	}
	return zw.Close()
}

// officialWriter is one official export in progress.
type officialWriter struct {
	x   *exporter
	zw  *zip.Writer
	sum Summary

	base         object // the official session an import kept (its "imported" state record)
	profile      []byte // the latest device profile
	properties   jsontext.Value
	images       []jsontext.Value
	treeIndex    []jsontext.Value
	appEvents    []jsontext.Value
	annotations  []jsontext.Value
	logCount     int
	requestCount int
	// artifactRecords are the artifact records as written under artifacts/, their blob the
	// entry: the extension lists them for our import to restore their times and types.
	artifactRecords []Record
}

// json writes one deflated JSON entry.
func (o *officialWriter) json(name string, v jsontext.Value) error {
	return zipFile(o.zw, name, v, true, o.x.now)
}

// kindsInExtension are the kinds the official format has no place for: they go to the
// extension as our records.
var kindsInExtension = []Kind{KindTraffic, KindControl, KindState, KindMessage, KindCrash, KindAppState, KindProfile, KindProperties,
	KindAnnotation}

// extension writes the records of kindsInExtension as our records.jsonl and files, and
// the artifact records whose files artifacts wrote; it also finds the session an import
// kept, the latest profile and properties. Annotations of the official form (no bundle)
// go to session.json instead.
func (o *officialWriter) extension() error {
	recs, err := newSpool()
	if err != nil {
		return err
	}
	defer recs.close()
	err = o.x.each(kindsInExtension, func(e exported) error {
		data := objectOf(e.Data)
		switch e.Kind {
		case KindAnnotation:
			if e.Blob == "" && data.get("annotationId") != nil && data.get("startUtc") != nil {
				o.annotations = append(o.annotations, e.Data)
				return nil
			}
		case KindState:
			if f, _ := str(data.get("format")); f == FormatOfficial {
				if s, err := members(data.get("session")); err == nil {
					o.base = s
				}
			}
		case KindProfile:
			o.profile = e.Data
		case KindProperties:
			if p := data.get("customProperties"); p.Kind() == '{' {
				o.properties = p
			}
		}
		if e.Blob != "" {
			name := extensionBlobs + strings.TrimPrefix(archiveBlobName(e.Record), archiveBlobsDir+"/")
			fw, err := zipEntry(o.zw, name, e.At, !slices.Contains(storedExt, path.Ext(e.Blob)))
			if err != nil {
				return err
			}
			if err := o.x.copyFile(fw, e); err != nil {
				return err
			}
			e.Blob = name
		}
		return appendLine(recs, e.Record)
	})
	for _, rec := range o.artifactRecords {
		if err == nil {
			err = appendLine(recs, rec)
		}
	}
	if err != nil {
		return err
	}
	if err := o.info(); err != nil || recs.n == 0 {
		return err
	}
	fw, err := zipEntry(o.zw, extensionRecords, o.x.now, true)
	if err == nil {
		_, err = io.Copy(fw, recs.all())
	}
	return err
}

// info writes the session's description (Summary.Info) to the extension, redacted and
// sanitised as our own format's manifest is, for our import to restore.
func (o *officialWriter) info() error {
	info := infoJSON(o.sum.Info)
	if info == nil {
		return nil
	}
	if o.x.rd != nil {
		info = o.x.rd.json(info)
	}
	if o.x.san != nil {
		info = o.x.san.json(info, false)
	}
	return o.json(extensionInfo, info)
}

// spooledItems collects the items of a JSON array that a document writes after its head,
// spooled; list writes them as the array.
type spooledItems struct {
	*spool
	count int
}

func newItems() (*spooledItems, error) {
	s, err := newSpool()
	return &spooledItems{spool: s}, err
}

func (it *spooledItems) add(v jsontext.Value) error {
	if it.count > 0 {
		if _, err := it.Write([]byte{','}); err != nil {
			return err
		}
	}
	it.count++
	_, err := it.Write(v)
	return err
}

// document writes a JSON document: head's members, then name with the spooled items as
// its array.
func (o *officialWriter) document(entry string, head object, name string, list *spooledItems) error {
	fw, err := zipEntry(o.zw, entry, o.x.now, true)
	if err != nil {
		return err
	}
	h := head.encode()
	b := append(h[:len(h)-1:len(h)-1], ',')
	b, _ = jsontext.AppendQuote(b, name)
	if _, err := fw.Write(append(b, ':', '[')); err != nil {
		return err
	}
	if _, err := io.Copy(fw, list.all()); err != nil {
		return err
	}
	_, err = fw.Write([]byte("]}"))
	return err
}

// logs writes session-data/logs.json and, when the recording came from an official
// archive with log streams, their index and files (the import prefers them).
func (o *officialWriter) logs() error {
	type stream struct {
		desc    object
		entries *spooledItems
	}
	var streams []*stream
	byID := map[string]*stream{}
	if o.base != nil {
		for _, it := range arrayItems(o.base.get("logStreams")) {
			d, err := members(it)
			id, _ := str(d.get("streamId"))
			if err != nil || strings.TrimSpace(id) == "" || byID[id] != nil {
				continue
			}
			list, err := newItems()
			if err != nil {
				return err
			}
			defer list.close()
			s := &stream{desc: d, entries: list}
			streams = append(streams, s)
			byID[id] = s
		}
	}
	all, err := newItems()
	if err != nil {
		return err
	}
	defer all.close()
	err = o.x.each([]Kind{KindLog}, func(e exported) error {
		entry := logEntryOf(e)
		o.logCount++
		id, _ := str(objectOf(entry).get("streamId"))
		s := byID[id]
		if s == nil && len(streams) > 0 {
			s = streams[0] // the SDK's own stream comes first
		}
		if s != nil {
			if err := s.entries.add(entry); err != nil {
				return err
			}
			if s != streams[0] {
				return nil
			}
		}
		return all.add(entry)
	})
	if err != nil {
		return err
	}
	head := object{{"schema", quoted(officialLogsSchema)}, {"savedAtUtc", officialTime(o.x.now)}}
	if err := o.document(officialLogsName, head, "logs", all); err != nil {
		return err
	}
	if len(streams) == 0 {
		return nil
	}
	var index []byte
	for i, s := range streams {
		id, _ := str(s.desc.get("streamId"))
		name := fmt.Sprintf("session-data/log-streams/%03d-%s.json", i, strings.ToLower(fileSegment(id, 64)))
		head := object{{"schema", quoted(officialStreamSchema)}, {"savedAtUtc", officialTime(o.x.now)}, {"streamId", quoted(id)}}
		if err := o.document(name, head, "entries", s.entries); err != nil {
			return err
		}
		d := s.desc.without("entries").without("retainedEntryStartIndex").set("entryPath", quoted(name)).
			set("entryCount", jsonNumber(float64(s.entries.count))).set("totalEntryCount", jsonNumber(float64(s.entries.count)))
		for _, req := range []string{"kind", "displayName", "status"} {
			if d.get(req) == nil {
				d = d.set(req, quoted(""))
			}
		}
		if i > 0 {
			index = append(index, ',')
		}
		index = append(index, d.encode()...)
	}
	idx := object{{"schema", quoted(officialStreamIndexV1)}, {"savedAtUtc", officialTime(o.x.now)}, {"streams", append(append([]byte{'['}, index...), ']')}}
	return o.json(officialStreamIndex, idx.encode())
}

// logEntryOf is a log record as an official log entry: the entry itself when the record
// came from an official archive, else built from the line.
func logEntryOf(e exported) jsontext.Value {
	data := objectOf(e.Data)
	if _, ok := str(data.get("message")); ok && data.get("timestampUtc") != nil {
		return data.encode()
	}
	line, ok := str(data.get("data"))
	if !ok || line == "" {
		line = e.Text
	}
	out := object{{"timestampUtc", officialTime(e.At)}, {"message", quoted(line)}, {"priority", jsonNumber(float64(officialPriority(e.Level)))},
		{"source", quoted("Client")}, {"tag", quoted("")}}
	return out.encode()
}

// telemetry writes session-data/telemetry.json: the channels (the latest declaration of
// each) and the samples, whose values the official format keeps as integers.
func (o *officialWriter) telemetry() error {
	var channels []jsontext.Value
	at := map[int]int{}
	metrics, err := newItems()
	if err != nil {
		return err
	}
	defer metrics.close()
	err = o.x.each([]Kind{KindChannel, KindMetric}, func(e exported) error {
		if e.Channel == nil {
			return nil
		}
		data := objectOf(e.Data)
		if e.Kind == KindChannel {
			color, ok := str(data.get("colorHex"))
			if !ok {
				if color, ok = str(data.get("color")); !ok {
					color = "#64748B"
				}
			}
			typ, ok := str(data.get("type"))
			if !ok || typ == "" {
				typ = "custom"
			}
			ch := object{{"channelId", jsonNumber(float64(*e.Channel))}, {"name", quoted(e.Text)}, {"colorHex", quoted(color)}, {"type", quoted(typ)}}
			for _, k := range []string{"unit", "source", "group", "kind"} {
				if v, ok := str(data.get(k)); ok {
					ch = append(ch, member{k, quoted(v)})
				}
			}
			if i, ok := at[*e.Channel]; ok {
				channels[i] = ch.encode()
			} else {
				at[*e.Channel] = len(channels)
				channels = append(channels, ch.encode())
			}
			return nil
		}
		segment, _ := integer(data.get("segmentId"), -1<<31, 1<<31)
		m := object{{"channelId", jsonNumber(float64(*e.Channel))}, {"value", jsonNumber(math.Round(e.Value))},
			{"capturedAtUtc", officialTime(e.At)}, {"segmentId", jsonNumber(float64(segment))}}
		return metrics.add(m.encode())
	})
	if err != nil {
		return err
	}
	head := object{{"schema", quoted(officialTelemetry)}, {"savedAtUtc", officialTime(o.x.now)}, {"channels", jsonArray(channels)}}
	return o.document(officialTelemetryName, head, "metrics", metrics)
}

// jsonArray joins values into an array.
func jsonArray(items []jsontext.Value) jsontext.Value {
	out := []byte{'['}
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
}

// touchBatchRows is the most rows the official SDK's writer puts in one batch.
const touchBatchRows = 512

// touches writes session-data/touches.json: the touches packed in ansight.touches.v1
// batches, one for each run of touches on the same surface.
func (o *officialWriter) touches() error {
	type batch struct {
		key       string
		t0        time.Time
		space     string
		unit      string
		surface   jsontext.Value
		ids, rows []jsontext.Value
	}
	var batches []*batch
	var cur *batch
	err := o.x.each([]Kind{KindTouch}, func(e exported) error {
		d := objectOf(e.Data)
		x, ok1 := num(d.get("x"))
		y, ok2 := num(d.get("y"))
		if !ok1 || !ok2 {
			return nil
		}
		code, _ := integer(d.get("actionCode"), 0, 255)
		pointer, _ := integer(d.get("pointerId"), -1<<31, 1<<31)
		space, _ := str(d.get("space"))
		if space == "" {
			space = "w"
		}
		unit, _ := str(d.get("unit"))
		surface := d.get("surface")
		if surface.Kind() != '[' {
			surface = jsontext.Value("[null,null,null]")
		}
		key := space + "\x00" + touchUnit(unit) + "\x00" + string(compact(surface))
		if cur == nil || cur.key != key || len(cur.rows) == touchBatchRows {
			cur = &batch{key: key, t0: e.At, space: space, unit: touchUnit(unit), surface: compact(surface)}
			batches = append(batches, cur)
		}
		delta := max(0, e.At.Sub(cur.t0).Round(time.Millisecond).Milliseconds())
		row := fmt.Sprintf("[%d,%d,%d,%s,%s", delta, code, pointer, jsonNumber(x), jsonNumber(y))
		pi, hasPI := integer(d.get("pointerIndex"), 0, 1<<31)
		pc, hasPC := integer(d.get("pointerCount"), 0, 1<<31)
		if (hasPI && pi != 0) || (hasPC && pc != 1) {
			if !hasPC {
				pc = 1
			}
			row += fmt.Sprintf(",%d,%d", pi, pc)
		}
		cur.rows = append(cur.rows, jsontext.Value(row+"]"))
		id, ok := str(d.get("id"))
		if !ok || id == "" {
			id = fmt.Sprintf("touch-%d", e.Seq)
		}
		cur.ids = append(cur.ids, quoted(id))
		return nil
	})
	if err != nil {
		return err
	}
	var list []jsontext.Value
	for _, b := range batches {
		list = append(list, object{{"t0", officialTime(b.t0)}, {"space", quoted(b.space)}, {"unit", quoted(b.unit)}, {"surface", b.surface},
			{"ids", jsonArray(b.ids)}, {"rows", jsonArray(b.rows)}}.encode())
	}
	doc := object{{"schema", quoted(TouchSchema)}, {"savedAtUtc", officialTime(o.x.now)}, {"batches", jsonArray(list)}}
	return o.json(officialTouchesName, doc.encode())
}

// requests writes one network/requests/<time>-<id>.json per request, with the members the
// official record requires.
func (o *officialWriter) requests() error {
	return o.x.each([]Kind{KindNetwork}, func(e exported) error {
		req := objectOf(e.Data)
		id, ok := str(req.get("id"))
		if !ok || id == "" {
			id = fmt.Sprintf("request-%d", e.Seq)
			req = req.set("id", quoted(id))
		}
		started := timeOr(req.get("startedAtUtc"), e.At)
		dur, _ := num(req.get("durationMilliseconds"))
		defaults := object{{"schema", quoted(NetworkSchema)}, {"source", quoted("ansight-go")}, {"startedAtUtc", officialTime(started)},
			{"completedAtUtc", officialTime(started.Add(time.Duration(dur * float64(time.Millisecond))))},
			{"durationMilliseconds", jsonNumber(dur)}, {"method", quoted("GET")}, {"url", quoted("")}}
		for _, d := range defaults {
			if v := req.get(d.name); v == nil || string(v) == "null" {
				req = req.set(d.name, d.value)
			}
		}
		for _, h := range []string{"requestHeaders", "responseHeaders"} {
			req = req.set(h, officialHeaders(req.get(h)))
		}
		for _, b := range []string{"requestBody", "responseBody"} {
			if v := req.get(b); v != nil {
				req = req.set(b, officialBody(v))
			}
		}
		o.requestCount++
		return o.json(requestEntryName(started, id), req.encode())
	})
}

// officialHeaders writes headers as the official list of {name, value} (an object of
// name → value, as some SDKs send, is turned into one).
func officialHeaders(v jsontext.Value) jsontext.Value {
	var out []jsontext.Value
	switch v.Kind() {
	case '[':
		for _, it := range arrayItems(v) {
			h, err := members(it)
			name, _ := str(h.get("name"))
			if err != nil || name == "" {
				continue
			}
			value, _ := str(h.get("value"))
			out = append(out, object{{"name", quoted(name)}, {"value", quoted(value)}}.encode())
		}
	case '{':
		h, _ := members(v)
		for _, m := range h {
			value, _ := str(m.value)
			out = append(out, object{{"name", quoted(m.name)}, {"value", quoted(value)}}.encode())
		}
	}
	return jsonArray(out)
}

// officialBody writes a captured body with the members the official record requires, or
// null for anything but an object.
func officialBody(v jsontext.Value) jsontext.Value {
	b, err := members(v)
	if err != nil {
		return jsontext.Value("null")
	}
	data, _ := str(b.get("data"))
	if _, ok := str(b.get("encoding")); !ok {
		b = b.set("encoding", quoted("utf-8"))
	}
	if b.get("data") == nil {
		b = b.set("data", quoted(""))
	}
	if _, ok := integer(b.get("capturedBytes"), 0, 1<<53); !ok {
		b = b.set("capturedBytes", jsonNumber(float64(len(data))))
	}
	if t := b.get("truncated"); string(t) != "true" && string(t) != "false" {
		b = b.set("truncated", jsontext.Value("false"))
	}
	return b.encode()
}

// treeFields are the official snapshot's members with the JSON kind each must have.
var treeFields = []struct {
	name string
	kind jsontext.Kind
}{
	{"visualTreeKind", '"'}, {"visualTreeFormat", '"'}, {"runtimePlatform", '"'}, {"rootScope", '"'}, {"maxDepth", '0'},
	{"includeProperties", 't'}, {"includeBindableProperties", 't'}, {"truncated", 't'}, {"screenshotFrameId", '"'},
	{"screenshotCapturedAtUtc", '"'}, {"actionId", '"'}, {"actionCapability", '"'}, {"evidencePhase", '"'}, {"treeHash", '"'},
	{"screenshotHash", '"'},
}

// trees writes one visual-trees/ entry per tree (ansight.session-visual-tree-snapshot.v2)
// and collects their index for session.json.
func (o *officialWriter) trees() error {
	pos := 0
	return o.x.each([]Kind{KindTree}, func(e exported) error {
		var payload jsontext.Value
		if e.Blob != "" {
			var buf bytes.Buffer
			if err := o.x.copyFile(&buf, e); err != nil {
				return err
			}
			if buf.Len() > 0 {
				payload = buf.Bytes()
			}
		}
		if payload.Kind() != '{' {
			payload = jsontext.Value("{}")
		}
		d := objectOf(e.Data)
		id, ok := str(d.get("snapshotId"))
		if !ok || strings.TrimSpace(id) == "" {
			id = fmt.Sprintf("tree-%d", e.Seq)
		}
		source, ok := str(d.get("source"))
		if !ok || source == "" {
			source = "ui"
		}
		// The official header requires the tree's kind, format and platform (C# required
		// members: System.Text.Json refuses a document without them, and the official
		// import then drops the tree, or the whole session.json for its index). A record
		// that does not name them (the SDKs' touch trees) takes them from its payload, read
		// through wire/uitree, as the official header takes them from the snapshot.
		derived := map[string]jsontext.Value{"visualTreeKind": quoted("unknown"), "visualTreeFormat": quoted(""), "runtimePlatform": quoted("")}
		nodes, ok := integer(d.get("nodeCount"), 0, 1<<31-1)
		if t, err := uitree.Parse(payload); err == nil {
			if t.Source != "" {
				derived["visualTreeKind"] = quoted(t.Source)
			}
			derived["visualTreeFormat"], derived["runtimePlatform"] = quoted(t.Format), quoted(t.Platform)
			if t.Truncated {
				derived["truncated"] = jsontext.Value("true")
			}
			if !ok {
				nodes = int64(t.NodeCount)
			}
		}
		header := object{{"snapshotId", quoted(id)}, {"capturedAtUtc", officialTime(e.At)}, {"source", quoted(source)},
			{"nodeCount", jsonNumber(float64(nodes))}}
		for _, f := range treeFields {
			v := d.get(f.name)
			k := v.Kind()
			if k == 'f' {
				k = 't'
			}
			switch {
			case v != nil && k == f.kind:
				header = append(header, member{f.name, v})
			case derived[f.name] != nil:
				header = append(header, member{f.name, derived[f.name]})
			}
		}
		snapshot := append(append(object{}, header...), member{"payload", payload})
		name := treeEntryName(e.At, pos, id)
		pos++
		doc := object{{"schema", quoted(officialTreeSchema)}, {"savedAtUtc", officialTime(o.x.now)}, {"header", header.encode()},
			{"snapshot", snapshot.encode()}}
		o.treeIndex = append(o.treeIndex, object{{"entryPath", quoted(name)}, {"header", header.encode()}}.encode())
		return o.json(name, doc.encode())
	})
}

// frames writes each frame at session-images/<frameId>.jpg and lists it for session.json.
func (o *officialWriter) frames() error {
	seen := map[string]bool{}
	return o.x.each([]Kind{KindFrame}, func(e exported) error {
		if e.Blob == "" {
			return nil
		}
		d := objectOf(e.Data)
		id, ok := str(d.get("frameId"))
		if !ok || !safeSegment(id) || seen[strings.ToLower(id)] {
			id = fmt.Sprintf("frame-%d", e.Seq)
		}
		seen[strings.ToLower(id)] = true
		fw, err := zipEntry(o.zw, officialImageEntry(id), e.At, false)
		if err != nil {
			return err
		}
		cw := &countWriter{w: fw}
		if err := o.x.copyFile(cw, e); err != nil {
			return err
		}
		w, _ := integer(d.get("width"), 0, 1<<31-1)
		h, _ := integer(d.get("height"), 0, 1<<31-1)
		q, ok := integer(d.get("quality"), 0, 100)
		if !ok {
			q = 80
		}
		o.images = append(o.images, object{{"frameId", quoted(id)}, {"capturedAtUtc", officialTime(e.At)}, {"format", quoted("jpeg")},
			{"width", jsonNumber(float64(w))}, {"height", jsonNumber(float64(h))}, {"quality", jsonNumber(float64(q))},
			{"byteCount", jsonNumber(float64(cw.n))}}.encode())
		return nil
	})
}

// countWriter counts what passes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// artifacts writes each artifact's file under artifacts/: at the relative path an
// official archive gave it, else as <seq>/<name>; the entry's time is the artifact's (to
// the second: what a zip holds), and the record itself (its exact time, type, transfer)
// goes to the extension.
func (o *officialWriter) artifacts() error {
	seen := map[string]bool{}
	return o.x.each([]Kind{KindArtifact}, func(e exported) error {
		if e.Blob == "" {
			return nil
		}
		d := objectOf(e.Data)
		name := ""
		if rel, ok := str(d.get("relativePath")); ok && checkEntryName(officialArtifactsDir+rel) == nil && !strings.HasPrefix(officialArtifactsDir+rel, extensionDir) {
			name = officialArtifactsDir + rel
		}
		if name == "" || seen[strings.ToLower(name)] {
			file, _ := str(d.get("fileName"))
			if !safeSegment(file) {
				file = fileSegment(strings.TrimSuffix(file, path.Ext(file)), 100) + strings.ToLower(path.Ext(e.Blob))
			}
			name = fmt.Sprintf("%s%d/%s", officialArtifactsDir, e.Seq, file)
		}
		seen[strings.ToLower(name)] = true
		fw, err := zipEntry(o.zw, name, e.At, false)
		if err != nil {
			return err
		}
		rec := e.Record
		rec.Blob = name
		o.artifactRecords = append(o.artifactRecords, rec)
		return o.x.copyFile(fw, e)
	})
}

// events collects the app events as the official applicationEvents.
func (o *officialWriter) events() error {
	return o.x.each([]Kind{KindEvent}, func(e exported) error {
		d := objectOf(e.Data)
		id := firstNonEmpty(strOf(d.get("eventId")), strOf(d.get("id")), fmt.Sprintf("event-%d", e.Seq))
		typ, ok := str(d.get("eventType"))
		if !ok || typ == "" {
			typ = "Event"
		}
		details, _ := str(d.get("details"))
		ch := 0
		if e.Channel != nil {
			ch = *e.Channel
		}
		o.appEvents = append(o.appEvents, object{{"eventId", quoted(id)}, {"label", quoted(e.Text)}, {"eventType", quoted(typ)},
			{"details", quoted(details)}, {"capturedAtUtc", officialTime(e.At)}, {"channelId", jsonNumber(float64(ch))}}.encode())
		return nil
	})
}

// session writes session.json last: it lists what the other entries hold.
func (o *officialWriter) session() error {
	s := o.base.without("appIcon").without("logStreams")
	if o.base != nil && o.base.get("logStreams") != nil {
		var streams []jsontext.Value
		for _, it := range arrayItems(o.base.get("logStreams")) {
			if d, err := members(it); err == nil {
				streams = append(streams, d.set("entries", jsontext.Value("[]")).encode())
			}
		}
		s = s.set("logStreams", jsonArray(streams))
	}
	info := objectOf(o.sum.Info)
	get := func(name string) string { v, _ := str(info.get(name)); return v }
	client := firstNonEmpty(get("clientName"), o.sum.DeviceName, o.sum.AppID, "ansight-go")
	sdk := ""
	if p, err := members(o.profile); err == nil {
		if sd, err := members(p.get("sdk")); err == nil {
			sdk, _ = str(sd.get("version"))
		}
	}
	config := jsontext.Value("null")
	if c := get("configId"); c != "" {
		config = quoted(c)
	}
	defaults := object{
		{"sessionId", quoted(o.sum.ID)}, {"appId", quoted(firstNonEmpty(o.sum.AppID, "unknown"))}, {"clientName", quoted(client)},
		{"remoteAddress", quoted(firstNonEmpty(get("remoteAddr"), "unknown"))}, {"createdUtc", officialTime(o.sum.FirstAt)},
		{"configId", config}, {"status", quoted("Disconnected")}, {"lastUpdatedUtc", officialTime(o.sum.LastAt)},
		{"isHistorical", jsontext.Value("true")}, {"tags", jsontext.Value(`["ansight-go"]`)},
	}
	if p := get("processSessionId"); p != "" {
		defaults = append(defaults, member{"processSessionId", quoted(p)})
	}
	if sdk != "" {
		defaults = append(defaults, member{"sdkVersion", quoted(sdk)})
	}
	if o.x.san != nil {
		defaults = objectOf(o.x.san.json(defaults.encode(), false))
	}
	for _, d := range defaults {
		if v := s.get(d.name); v == nil || (string(v) == "null" && d.name != "configId") {
			s = s.set(d.name, d.value)
		}
	}
	if label := o.label(); label != "" {
		s = s.set("name", quoted(label)) // the official session's display name
	}
	if o.profile != nil {
		s = s.set("deviceProfileJson", quoted(string(o.profile)))
	}
	if o.properties != nil {
		s = s.set("customProperties", o.properties)
	}
	empty := jsontext.Value("[]")
	s = s.set("images", jsonArray(o.images)).set("annotations", jsonArray(o.annotations)).set("applicationEvents", jsonArray(o.appEvents))
	for _, k := range []string{"touches", "networkRequests", "visualTreeSnapshots", "logs", "metricChannels", "metrics"} {
		s = s.set(k, empty)
	}
	for _, k := range []string{"analyses", "agentTaskLinks", "artifactSnapshots"} {
		if s.get(k) == nil {
			s = s.set(k, empty)
		}
	}
	s = s.set("totalLogCount", jsonNumber(float64(o.logCount))).set("retainedLogStartIndex", jsonNumber(float64(o.logCount))).
		set("totalNetworkRequestCount", jsonNumber(float64(o.requestCount)))
	doc := object{{"schema", quoted(officialCaptureV2)}, {"savedAtUtc", officialTime(o.x.now)}, {"session", s.encode()},
		{"visualTreeSnapshotIndex", jsonArray(o.treeIndex)}}
	return o.json(officialSessionName, doc.encode())
}

// label is the session's label as the export writes it: redacted and sanitised as the
// rest of the session is.
func (o *officialWriter) label() string {
	label := o.sum.Label
	if o.x.rd != nil {
		label = o.x.rd.string(label)
	}
	if o.x.san != nil {
		label = o.x.san.text(label, false)
	}
	return label
}

// strOf is a JSON string's value, "" for anything else.
func strOf(v jsontext.Value) string {
	s, _ := str(v)
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

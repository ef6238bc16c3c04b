package recording

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// An official SDK's offline capture (FormatOfflineCapture) is the SDK's session directory
// zipped as it is, under .ansight/sessions/<id>/ (or at the archive's root):
//
//	manifest.json                       the session (PascalCase members)
//	metadata/channels.json              {"ch":[{id, n, c}]}
//	metadata/device-profile.json        the DeviceAppProfile
//	metadata/custom-properties.json     the session's custom properties
//	telemetry/metrics/m-*.jsonl         {t, c, v}: Unix ms, channel, value
//	telemetry/events/e-*.jsonl          {id, t, c, k, l, d}: event kind, label, details
//	input/touches/t-*.jsonl             {id, t, a, p, i, pc, x, y, w, h, u, s}
//	network/requests/*.json             one ansight.network-request.v1 each
//	screenshots/*.jpg, screenshots/index/s-*.jsonl   {t, p, w, h, q, b}
//	annotations/bundles/*.ansightannotation, annotations/index.jsonl   {id, t, p, b}
//	diagnostics/crashes/<id>.json (+ <id>.trace)
//
// (the SDK's OfflineCaptureController and OfflineCaptureJson, read through the search
// index). Every line is bounded; a line that is not a JSON object of the known shape is
// skipped, as the official import skips it.

// maxOfflineLine bounds one JSON line of an offline capture (its records are a few dozen
// bytes).
const maxOfflineLine = 1 << 20

// offlineDirs are the directories that tell an offline capture's root.
var offlineDirs = []string{"telemetry/", "input/", "screenshots/", "metadata/", "network/", "annotations/", "diagnostics/"}

// offlineCaptureRoot finds the one session directory of an offline capture: the prefix
// of a manifest.json beside at least one of offlineDirs.
func offlineCaptureRoot(z *zipArchive) (string, bool) {
	var roots []string
	for _, name := range z.names {
		if path.Base(name) != ManifestName {
			continue
		}
		root := strings.TrimSuffix(name, ManifestName)
		for _, d := range offlineDirs {
			if len(z.under(root+d)) > 0 {
				roots = append(roots, root)
				break
			}
		}
	}
	if len(roots) != 1 {
		return "", false
	}
	return roots[0], true
}

// offlineSource reads an offline capture into entries, as officialSource does.
type offlineSource struct {
	officialSource
	root     string
	manifest object
}

func openOfflineCapture(z *zipArchive, root, dir string) (importSource, error) {
	s := &offlineSource{officialSource: officialSource{z: z, dir: dir, rep: ImportReport{Format: FormatOfflineCapture}}, root: root}
	b, err := z.readAll(root+ManifestName, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	if s.manifest, err = parseObject(b); err != nil {
		return nil, fmt.Errorf("%s: %w", root+ManifestName, err)
	}
	if err := checkFoldedNames(s.manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", root+ManifestName, err)
	}
	s.created = timeOr(foldGet(s.manifest, "startedAtUtc"), time.Now().UTC())
	steps := []func() error{s.metadata, s.metrics, s.events, s.touchLines, s.requests, s.screenshots, s.annotations, s.crashes}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
		if s.tooMuch {
			return nil, errHeld
		}
	}
	s.entries = append(s.entries, entry{kind: KindState, at: s.created, text: "imported " + FormatOfflineCapture,
		data: object{{"format", quoted(FormatOfflineCapture)}, {"manifest", s.manifest.encode()}}.encode()})
	if t, ok := parseTime(foldGet(s.manifest, "stoppedAtUtc")); ok {
		kind, _ := str(foldGet(s.manifest, "terminationKind"))
		s.entries = append(s.entries, entry{kind: KindState, at: t, text: strings.TrimSpace("stopped " + kind)})
	}
	sort.SliceStable(s.entries, func(i, j int) bool { return s.entries[i].at.Before(s.entries[j].at) })
	return s, nil
}

// foldGet returns the member whose name equals name ignoring case (the SDK writes its
// manifest in PascalCase, its JSON lines in short lower-case names).
func foldGet(o object, name string) jsontext.Value {
	for _, m := range o {
		if strings.EqualFold(m.name, name) {
			return m.value
		}
	}
	return nil
}

// checkFoldedNames refuses an object with two names equal but for case: read ignoring
// case, either could be the one meant.
func checkFoldedNames(o object) error {
	seen := map[string]string{}
	for _, m := range o {
		k := strings.ToLower(m.name)
		if prev, ok := seen[k]; ok {
			return fmt.Errorf("members %q and %q differ only by case", prev, m.name)
		}
		seen[k] = m.name
	}
	return nil
}

// lines calls fn with each JSON object line of the entries under dir (sorted), each
// checked strictly; a line that is not an object is skipped and counted.
func (s *offlineSource) lines(dir string, fn func(obj object)) error {
	for _, name := range s.z.under(s.root + dir) {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		if err := s.eachLine(name, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *offlineSource) eachLine(name string, fn func(obj object)) error {
	rc, err := s.z.open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	for {
		b, err := readLine(br, maxOfflineLine)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		obj, err := parseObject(b)
		if err != nil || checkFoldedNames(obj) != nil {
			s.rep.skip("offlineLine")
			continue
		}
		fn(obj)
	}
}

// unixMillis reads a line's t: Unix milliseconds, within years 1970–9999.
func unixMillis(v jsontext.Value) (time.Time, bool) {
	ms, ok := integer(v, 1, 253402300799999)
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

func (s *offlineSource) metadata() error {
	if obj, err := s.optional(s.root+"metadata/channels.json", maxManifestBytes); err != nil {
		return err
	} else if obj != nil {
		for _, it := range arrayItems(obj.get("ch")) {
			ch, err := members(it)
			if err != nil {
				continue
			}
			id, ok := integer(ch.get("id"), 0, 255)
			name, _ := str(ch.get("n"))
			if !ok {
				continue
			}
			if strings.TrimSpace(name) == "" {
				name = fmt.Sprintf("Channel %d", id)
			}
			o := object{{"channelId", jsonNumber(float64(id))}, {"name", quoted(name)}, {"type", quoted("custom")}}
			if c, ok := str(ch.get("c")); ok {
				o = append(o, member{"colorHex", quoted(c)})
			}
			s.add(entry{kind: KindChannel, at: s.created, channel: int(id), hasChan: true, text: clip(name, maxTextBytes), data: o.encode()})
		}
	}
	if obj, err := s.optional(s.root+"metadata/device-profile.json", maxOfficialRequest); err != nil {
		return err
	} else if obj != nil {
		e := profile(obj, s.created)
		e.at = s.created
		s.add(e)
	}
	if obj, err := s.optional(s.root+"metadata/custom-properties.json", maxOfficialRequest); err != nil {
		return err
	} else if obj != nil {
		s.add(entry{kind: KindProperties, at: s.created, data: object{{"customProperties", obj.encode()}}.encode()})
	}
	return nil
}

func (s *offlineSource) metrics() error {
	return s.lines("telemetry/metrics/", func(m object) {
		t, ok1 := unixMillis(m.get("t"))
		ch, ok2 := integer(m.get("c"), 0, 255)
		v, ok3 := num(m.get("v"))
		if !(ok1 && ok2 && ok3) {
			s.rep.skip("offlineLine")
			return
		}
		data := object{{"channelId", jsonNumber(float64(ch))}, {"value", jsonNumber(v)}, {"capturedAtUtc", officialTime(t)}}
		s.add(entry{kind: KindMetric, at: t, channel: int(ch), hasChan: true, value: v, data: data.encode()})
	})
}

func (s *offlineSource) events() error {
	return s.lines("telemetry/events/", func(ev object) {
		t, ok := unixMillis(ev.get("t"))
		if !ok {
			s.rep.skip("offlineLine")
			return
		}
		label, _ := str(ev.get("l"))
		if strings.TrimSpace(label) == "" {
			label = "Event"
		}
		details, _ := str(ev.get("d"))
		id, _ := str(ev.get("id"))
		data := object{{"eventId", quoted(id)}, {"label", quoted(label)}, {"eventType", quoted("Event")}, {"details", quoted(details)},
			{"capturedAtUtc", officialTime(t)}}
		if k := ev.get("k"); k != nil {
			data = append(data, member{"kind", k})
		}
		e := entry{kind: KindEvent, at: t, text: clip(strings.TrimSpace(label), maxTextBytes)}
		if ch, ok := integer(ev.get("c"), 0, 255); ok {
			e.channel, e.hasChan = int(ch), true
			data = append(data, member{"channelId", jsonNumber(float64(ch))})
		}
		e.data = data.encode()
		s.add(e)
	})
}

func (s *offlineSource) touchLines() error {
	return s.lines("input/touches/", func(t object) {
		at, ok1 := unixMillis(t.get("t"))
		code, ok2 := integer(t.get("a"), 0, 7)
		pointer, ok3 := integer(t.get("p"), -1<<31, 1<<31)
		x, ok4 := num(t.get("x"))
		y, ok5 := num(t.get("y"))
		if !(ok1 && ok2 && ok3 && ok4 && ok5) {
			s.rep.skip("offlineLine")
			return
		}
		row := fmt.Sprintf("[0,%d,%d,%s,%s]", code, pointer, jsonNumber(x), jsonNumber(y))
		o := object{{"deltaMs", jsonNumber(0)}, {"action", quoted(touchActions[code])}, {"actionCode", jsonNumber(float64(code))},
			{"pointerId", jsonNumber(float64(pointer))}, {"x", jsonNumber(x)}, {"y", jsonNumber(y)}}
		if v, ok := integer(t.get("i"), 0, 1<<31); ok {
			o = append(o, member{"pointerIndex", jsonNumber(float64(v))})
		}
		if v, ok := integer(t.get("pc"), 0, 1<<31); ok {
			o = append(o, member{"pointerCount", jsonNumber(float64(v))})
		}
		if id, ok := str(t.get("id")); ok {
			o = append(o, member{"id", quoted(id)})
		}
		unit, _ := str(t.get("u"))
		o = append(o, member{"space", quoted("w")}, member{"unit", quoted(touchUnit(unit))})
		surface := []byte{'['}
		for i, k := range []string{"w", "h", "s"} {
			if i > 0 {
				surface = append(surface, ',')
			}
			if v, ok := num(t.get(k)); ok {
				surface = append(surface, jsonNumber(v)...)
			} else {
				surface = append(surface, "null"...)
			}
		}
		o = append(o, member{"surface", append(surface, ']')}, member{"row", jsontext.Value(row)})
		s.add(entry{kind: KindTouch, at: at, text: fmt.Sprintf("%s #%d (%g, %g)", touchActions[code], pointer, x, y), data: o.encode()})
	})
}

// touchUnit is a packed batch's unit code of a unit name, as the official writer encodes
// it (px when unknown).
func touchUnit(u string) string {
	switch lower(u) {
	case "pixels", "pixel", "px", "":
		return "px"
	case "points", "point", "pt":
		return "pt"
	case "normalized", "unit", "ratio", "n":
		return "n"
	}
	return strings.TrimSpace(u)
}

func (s *offlineSource) requests() error {
	for _, name := range s.z.under(s.root + officialRequestsDir) {
		if !isJSONName(name) {
			continue
		}
		if err := s.requestFile(name); err != nil {
			return err
		}
	}
	return nil
}

func (s *offlineSource) screenshots() error {
	var failed error
	err := s.lines("screenshots/index/", func(f object) {
		if failed != nil {
			return
		}
		t, ok := unixMillis(f.get("t"))
		p, _ := str(f.get("p"))
		name := s.root + strings.TrimLeft(strings.ReplaceAll(p, `\`, "/"), "/")
		if !ok || p == "" || checkEntryName(name) != nil || !s.z.has(name) {
			s.rep.skip("offlineScreenshot")
			return
		}
		id := fileSegment(strings.TrimSuffix(path.Base(name), path.Ext(name)), 128)
		ext := imageExt(strings.TrimPrefix(path.Ext(name), "."))
		file, err := s.extract(name, ext)
		if err != nil {
			failed = err
			return
		}
		w, _ := integer(f.get("w"), 0, 1<<31-1)
		h, _ := integer(f.get("h"), 0, 1<<31-1)
		q, _ := integer(f.get("q"), 0, 100)
		data := object{{"source", quoted("archive")}, {"frameId", quoted(id)}, {"format", quoted("jpeg")}, {"width", jsonNumber(float64(w))},
			{"height", jsonNumber(float64(h))}, {"quality", jsonNumber(float64(q))}, {"byteCount", jsonNumber(float64(s.z.size(name)))}}
		s.add(entry{kind: KindFrame, at: t, text: fmt.Sprintf("%dx%d", w, h), data: data.encode(), link: file, owned: true, ext: ext})
	})
	if failed != nil {
		return failed
	}
	return err
}

func (s *offlineSource) annotations() error {
	times := map[string]time.Time{}
	if s.z.has(s.root + "annotations/index.jsonl") {
		if err := s.eachLine(s.root+"annotations/index.jsonl", func(a object) {
			if p, ok := str(a.get("p")); ok {
				if t, ok := unixMillis(a.get("t")); ok {
					times[p] = t
				}
			}
		}); err != nil {
			return err
		}
	}
	for _, name := range s.z.under(s.root + "annotations/bundles/") {
		if !strings.HasSuffix(name, ".ansightannotation") {
			continue
		}
		rel := strings.TrimPrefix(name, s.root)
		at, ok := times[rel]
		if !ok {
			at = s.created
		}
		file, err := s.extract(name, "zip")
		if err != nil {
			return err
		}
		id := strings.TrimSuffix(path.Base(name), ".ansightannotation")
		meta := object{{"annotationId", quoted(id)}, {"fileName", quoted(path.Base(name))}, {"sizeBytes", jsonNumber(float64(s.z.size(name)))}}
		s.add(entry{kind: KindAnnotation, at: at, text: clip(id, maxTextBytes), data: meta.encode(), link: file, owned: true, ext: "zip"})
	}
	return nil
}

func (s *offlineSource) crashes() error {
	for _, name := range s.z.under(s.root + "diagnostics/crashes/") {
		base := path.Base(name)
		if isJSONName(name) && !strings.HasSuffix(base, ".metrickit.json") {
			b, err := s.z.readAll(name, maxOfficialRequest)
			if err != nil {
				return err
			}
			report, err := parseObject(b)
			if err != nil {
				s.rep.skip("crashReport")
				continue
			}
			meta := object{}
			for _, k := range []string{"reportId", "kind", "platform", "occurredAtUtc", "confidence"} {
				if v := report.get(k); v != nil {
					meta = append(meta, member{k, v})
				}
			}
			file, err := s.blobFile(b, "json")
			if err != nil {
				return err
			}
			kind, _ := str(report.get("kind"))
			s.add(entry{kind: KindCrash, at: timeOr(report.get("occurredAtUtc"), s.created), text: clip(strings.TrimSpace(kind+" "+base), maxTextBytes),
				data: meta.encode(), link: file, owned: true, ext: "json"})
			continue
		}
		ext := artifactExt(base)
		file, err := s.extract(name, ext)
		if err != nil {
			return err
		}
		meta := object{{"fileName", quoted(base)}, {"relativePath", quoted(strings.TrimPrefix(name, s.root))}, {"sizeBytes", jsonNumber(float64(s.z.size(name)))}}
		s.add(entry{kind: KindArtifact, at: s.created, text: clip(base, maxTextBytes), data: meta.encode(), link: file, owned: true, ext: ext})
	}
	return nil
}

func (s *offlineSource) meta() importMeta {
	id, _ := str(foldGet(s.manifest, "sessionId"))
	app, _ := str(foldGet(s.manifest, "appId"))
	client, _ := str(foldGet(s.manifest, "clientName"))
	o := object{{"id", quoted(id)}, {"appId", quoted(app)}, {"deviceId", quoted("")}, {"deviceName", quoted(client)},
		{"clientName", quoted(client)}, {"state", quoted("disconnected")}, {"connectedAt", officialTime(s.created)}}
	if v, ok := str(foldGet(s.manifest, "processSessionId")); ok && v != "" {
		o = append(o, member{"processSessionId", quoted(v)})
	}
	if t, ok := parseTime(foldGet(s.manifest, "stoppedAtUtc")); ok {
		o = append(o, member{"disconnectedAt", officialTime(t)})
	}
	return importMeta{id: id, info: o.encode(), state: "disconnected"}
}

package recording

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// officialSource reads an official session archive (FormatOfficial). Its documents are
// read whole (each bounded), turned into entries in time order, and their files extracted
// into dir as they are found.
type officialSource struct {
	z       *zipArchive
	dir     string
	files   int // names the extracted files
	session object
	info    []byte // the session's description an archive we exported kept (extensionInfo)
	created time.Time
	rep     ImportReport
	claimed map[string]bool // the artifacts/ entries the extension's records restored
	entries []entry
	pos     int
	held    int64 // what entries hold in memory (entry.held)
	tooMuch bool  // an entry was left out because of maxHeldBytes
}

// maxHeldBytes bounds the memory an official archive's or an offline capture's entries
// take while they are read: their records are sorted by time before the first is stored,
// so all are held at once (their files wait on disk). Without it, a small archive of
// highly compressible JSON (a zip bomb within the disk budget) takes gigabytes of memory:
// 600 KB of visual trees made 1.5 GB. The official documents are bounded one by one
// (maxOfficialDoc), their number is not.
var maxHeldBytes int64 = 512 << 20 // a variable for the tests

// errHeld refuses an archive whose records do not fit in maxHeldBytes.
var errHeld = fmt.Errorf("the archive's records take more than %d MiB of memory to read (its JSON inflates too far; our own format is read as a stream)", maxHeldBytes>>20)

// openOfficial reads the whole official archive into entries. It fails, as the official
// import does, when session.json is not an object of a known schema or a listed frame has
// no image; it skips (and counts) what the official import skips.
func openOfficial(z *zipArchive, dir string) (importSource, error) {
	s := &officialSource{z: z, dir: dir, rep: ImportReport{Format: FormatOfficial}}
	doc, err := s.object(officialSessionName, maxOfficialDoc)
	if err != nil {
		return nil, err
	}
	schema, _ := str(doc.get("schema"))
	if schema != officialCaptureV2 && schema != officialCaptureV1 {
		return nil, fmt.Errorf("unsupported session archive schema %q", schema)
	}
	s.rep.Schema = schema
	if s.session, err = members(doc.get("session")); err != nil {
		return nil, fmt.Errorf("%s: the session is not an object", officialSessionName)
	}
	s.created = timeOr(s.session.get("createdUtc"), time.Now().UTC())
	if z.has(extensionInfo) {
		b, err := z.readAll(extensionInfo, maxManifestBytes)
		if err != nil {
			return nil, err
		}
		s.info = infoJSON(b) // one that is not an object is left out: meta describes the session
	}
	steps := []func() error{s.sessionState, s.logs, s.telemetry, s.touches, s.requests, func() error { return s.trees(doc) },
		s.images, s.artifacts, s.events}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
		if s.tooMuch {
			return nil, errHeld
		}
	}
	if doc.get("author") != nil && s.session.get("author") == nil {
		s.session = s.session.set("author", doc.get("author"))
	}
	s.entries = append(s.entries, s.importedState(doc))
	sort.SliceStable(s.entries, func(i, j int) bool { return s.entries[i].at.Before(s.entries[j].at) })
	return s, nil
}

// object reads an entry that must be one JSON object.
func (s *officialSource) object(name string, max int64) (object, error) {
	b, err := s.z.readAll(name, max)
	if err != nil {
		return nil, err
	}
	obj, err := parseObject(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return obj, nil
}

// optional reads an entry that may be missing.
func (s *officialSource) optional(name string, max int64) (object, error) {
	if !s.z.has(name) {
		return nil, nil
	}
	return s.object(name, max)
}

// add keeps an entry, within maxHeldBytes (beyond, the entry is left out and the
// archive refused once its step ends).
func (s *officialSource) add(e entry) {
	n := e.held()
	if s.held+n > maxHeldBytes {
		s.tooMuch = true
		return
	}
	s.held += n
	s.entries = append(s.entries, e)
}

// blobFile writes data as the next extracted file.
func (s *officialSource) blobFile(data []byte, ext string) (string, error) {
	s.files++
	p := filepath.Join(s.dir, fmt.Sprintf("o%d.%s", s.files, ext))
	return p, os.WriteFile(p, data, 0o600)
}

// extract copies an archive entry as the next extracted file.
func (s *officialSource) extract(name, ext string) (string, error) {
	s.files++
	p := filepath.Join(s.dir, fmt.Sprintf("o%d.%s", s.files, ext))
	_, err := s.z.extract(name, p)
	return p, err
}

// sessionState turns the session's profile, properties, app state and annotations into
// records. An archive we exported carries the history of the first three among its
// extension's records, which are restored instead.
func (s *officialSource) sessionState() error {
	if s.z.has(extensionRecords) {
		return s.annotationsOf()
	}
	if obj, err := members(s.profileJSON()); err == nil {
		e := profile(obj, s.created)
		e.at = s.created
		s.add(e)
	}
	if props := s.session.get("customProperties"); props.Kind() == '{' {
		s.add(entry{kind: KindProperties, at: s.created, data: object{{"customProperties", props}}.encode()})
	}
	if st, ok := str(s.session.get("appState")); ok {
		if e, ok := appState(object{{"state", quoted(st)}, {"changedAtUtc", s.session.get("appStateChangedUtc")}}, s.created); ok {
			s.add(e)
		}
	}
	return s.annotationsOf()
}

// profileJSON is the session's device profile: deviceProfileJson as the official host
// keeps it verbatim, else deviceProfile.
func (s *officialSource) profileJSON() jsontext.Value {
	if raw, ok := str(s.session.get("deviceProfileJson")); ok && raw != "" {
		if obj, err := parseObject([]byte(raw)); err == nil {
			return obj.encode()
		}
	}
	return s.session.get("deviceProfile")
}

// annotationsOf reads the session's annotations.
func (s *officialSource) annotationsOf() error {
	for _, a := range arrayItems(s.session.get("annotations")) {
		obj, err := members(a)
		if err != nil {
			continue
		}
		label, _ := str(obj.get("label"))
		s.add(entry{kind: KindAnnotation, at: timeOr(obj.get("startUtc"), s.created), text: clip(label, maxTextBytes), data: obj.encode()})
	}
	return nil
}

// events reads the session's application events.
func (s *officialSource) events() error {
	for _, it := range arrayItems(s.session.get("applicationEvents")) {
		ev, err := members(it)
		if err != nil {
			continue
		}
		label, _ := str(ev.get("label"))
		e := entry{kind: KindEvent, at: timeOr(ev.get("capturedAtUtc"), s.created), text: clip(strings.TrimSpace(label), maxTextBytes), data: ev.encode()}
		if ch, ok := integer(ev.get("channelId"), 0, 255); ok {
			e.channel, e.hasChan = int(ch), true
		}
		s.add(e)
	}
	return nil
}

// logs reads the log streams (their index and files), else the legacy logs.json, else
// the logs inline in session.json — the official import's order of preference.
func (s *officialSource) logs() error {
	index, err := s.optional(officialStreamIndex, maxOfficialDoc)
	if err != nil {
		return err
	}
	if index != nil {
		for _, it := range arrayItems(index.get("streams")) {
			d, err := members(it)
			if err != nil {
				continue
			}
			id, _ := str(d.get("streamId"))
			p, _ := str(d.get("entryPath"))
			if strings.TrimSpace(id) == "" || strings.TrimSpace(p) == "" {
				continue
			}
			name, ok := normalizeIndexPath(p)
			if !ok {
				s.rep.skip("logStreamUnsafePath")
				continue
			}
			doc, err := s.optional(name, maxOfficialDoc)
			if err != nil {
				return err
			}
			for _, le := range arrayItems(doc.get("entries")) {
				s.logEntry(le, id)
			}
		}
		return nil
	}
	doc, err := s.optional(officialLogsName, maxOfficialDoc)
	if err != nil {
		return err
	}
	list := s.session.get("logs")
	if doc != nil {
		list = doc.get("logs")
	}
	for _, le := range arrayItems(list) {
		s.logEntry(le, "")
	}
	return nil
}

// logEntry turns one official log entry into a log record; Data keeps it as it was, with
// its stream.
func (s *officialSource) logEntry(v jsontext.Value, stream string) {
	obj, err := members(v)
	if err != nil {
		return
	}
	msg, _ := str(obj.get("message"))
	if stream != "" && obj.get("streamId") == nil {
		obj = append(obj, member{"streamId", quoted(stream)})
	}
	level, ok := levelOfPriority(obj.get("priority"))
	if !ok {
		level = detectLevel(msg)
	}
	if msg == "" {
		msg = "<empty>"
	}
	s.add(entry{kind: KindLog, at: timeOr(obj.get("timestampUtc"), s.created), level: level, text: clip(msg, maxTextBytes), data: obj.encode()})
}

// telemetry reads the metric channels and samples (telemetry.json, else inline).
func (s *officialSource) telemetry() error {
	doc, err := s.optional(officialTelemetryName, maxOfficialDoc)
	if err != nil {
		return err
	}
	channels, metrics := s.session.get("metricChannels"), s.session.get("metrics")
	if doc != nil {
		channels, metrics = doc.get("channels"), doc.get("metrics")
	}
	for _, it := range arrayItems(channels) {
		ch, err := members(it)
		if err != nil {
			continue
		}
		id, ok := integer(ch.get("channelId"), 0, 255)
		name, _ := str(ch.get("name"))
		if !ok || strings.TrimSpace(name) == "" {
			continue
		}
		s.add(entry{kind: KindChannel, at: s.created, channel: int(id), hasChan: true, text: clip(strings.TrimSpace(name), maxTextBytes), data: ch.encode()})
	}
	for _, it := range arrayItems(metrics) {
		m, err := members(it)
		if err != nil {
			continue
		}
		id, ok := integer(m.get("channelId"), 0, 255)
		v, vok := num(m.get("value"))
		if !ok || !vok {
			continue
		}
		s.add(entry{kind: KindMetric, at: timeOr(m.get("capturedAtUtc"), s.created), channel: int(id), hasChan: true, value: v, data: m.encode()})
	}
	return nil
}

// touches reads the packed touch batches (touches.json, else the inline records).
func (s *officialSource) touches() error {
	doc, err := s.optional(officialTouchesName, maxOfficialDoc)
	if err != nil {
		return err
	}
	if doc != nil {
		for _, it := range arrayItems(doc.get("batches")) {
			b, err := members(it)
			if err != nil {
				continue
			}
			for _, e := range touches(b, s.created) {
				s.add(e)
			}
		}
		return nil
	}
	for _, it := range arrayItems(s.session.get("touches")) {
		t, err := members(it)
		if err != nil {
			continue
		}
		if e, ok := touchRecord(t, s.created); ok {
			s.add(e)
		}
	}
	return nil
}

// touchRecord reads one touch in the official host's record form ({id, action,
// capturedAtUtc, pointerId, x, y, …}).
func touchRecord(t object, def time.Time) (entry, bool) {
	x, ok1 := num(t.get("x"))
	y, ok2 := num(t.get("y"))
	if !ok1 || !ok2 {
		return entry{}, false
	}
	name, _ := str(t.get("action"))
	code := touchActionCode(name)
	pointer, _ := integer(t.get("pointerId"), -1<<31, 1<<31)
	row := []byte(fmt.Sprintf("[0,%d,%d,%s,%s]", code, pointer, jsonNumber(x), jsonNumber(y)))
	o := object{{"deltaMs", jsonNumber(0)}, {"action", quoted(touchActions[code])}, {"actionCode", jsonNumber(float64(code))},
		{"pointerId", jsonNumber(float64(pointer))}, {"x", jsonNumber(x)}, {"y", jsonNumber(y)}}
	for _, m := range []string{"id", "pointerIndex", "pointerCount", "surfaceWidth", "surfaceHeight", "surfaceScale", "coordinateSpace", "coordinateUnit"} {
		if v := t.get(m); v != nil && string(v) != "null" {
			o = append(o, member{m, v})
		}
	}
	o = append(o, member{"row", row})
	return entry{kind: KindTouch, at: timeOr(t.get("capturedAtUtc"), def), text: fmt.Sprintf("%s #%d (%g, %g)", touchActions[code], pointer, x, y),
		data: o.encode()}, true
}

// touchActionCode is the packed code of an action name (4, unknown, for others).
func touchActionCode(name string) int {
	switch lower(name) {
	case "down", "pressed":
		return 0
	case "move", "moved":
		return 1
	case "up", "released":
		return 2
	case "cancel", "cancelled", "canceled":
		return 3
	case "hoverenter":
		return 5
	case "hovermove":
		return 6
	case "hoverexit":
		return 7
	}
	return 4
}

// requests reads the network request files (else the inline requests), sanitised as on
// intake. A file that is not a JSON object is skipped, as the official import skips it.
func (s *officialSource) requests() error {
	var found bool
	for _, name := range s.z.names {
		if !strings.Contains(strings.ToLower(name), officialRequestsDir) || !isJSONName(name) || strings.HasPrefix(name, officialArtifactsDir) {
			continue
		}
		found = true
		if err := s.requestFile(name); err != nil {
			return err
		}
	}
	if !found {
		for _, it := range arrayItems(s.session.get("networkRequests")) {
			if req, err := members(it); err == nil {
				s.request(req)
			}
		}
	}
	return nil
}

// requestFile reads one network request file; one that is not a JSON object is skipped,
// as the official import skips it.
func (s *officialSource) requestFile(name string) error {
	b, err := s.z.readAll(name, maxOfficialRequest)
	if err != nil {
		return err
	}
	req, err := parseObject(b)
	if err != nil {
		s.rep.skip("networkRequest")
		return nil
	}
	s.request(req)
	return nil
}

func (s *officialSource) request(req object) {
	if req.get("schema") == nil {
		req = append(object{{"schema", quoted(NetworkSchema)}}, req...)
	}
	req = sanitizeNetwork(req, false)
	e := entry{kind: KindNetwork, at: timeOr(req.get("startedAtUtc"), s.created), text: networkSummary(req), data: req.encode()}
	if d, ok := num(req.get("durationMilliseconds")); ok {
		e.value = d
	}
	s.add(e)
}

// trees reads the visual trees the index lists, as the official import does: an entry
// with an unsafe path, of another schema or whose snapshotId differs from the index is
// skipped, and of two trees with one snapshotId the newest is kept. Without an index, the
// trees inline in session.json are read.
func (s *officialSource) trees(doc object) error {
	// Each tree's payload goes to its file as soon as it is read, so that only one tree at
	// a time is in memory; a duplicate's file is removed when a newer tree replaces it.
	type tree struct {
		id string
		e  entry
	}
	var list []tree
	keep := func(snap object) error {
		id, _ := str(snap.get("snapshotId"))
		at := timeOr(snap.get("capturedAtUtc"), s.created)
		source, _ := str(snap.get("source"))
		e := entry{kind: KindTree, at: at, data: snap.without("payload").encode(), text: clip(strings.TrimSpace(source+" "+id), maxTextBytes)}
		if payload := snap.get("payload"); payload.Kind() == '{' {
			p, err := s.blobFile(compact(payload), "json")
			if err != nil {
				return err
			}
			e.link, e.owned, e.ext = p, true, "json"
		}
		if n := e.held(); s.held+n <= maxHeldBytes {
			s.held += n // counted now: the list is held until every tree is read
			list = append(list, tree{id: id, e: e})
		} else {
			s.tooMuch = true
		}
		return nil
	}
	index := arrayItems(doc.get("visualTreeSnapshotIndex"))
	for _, it := range index {
		d, err := members(it)
		if err != nil {
			continue
		}
		p, _ := str(d.get("entryPath"))
		header, _ := members(d.get("header"))
		want, _ := str(header.get("snapshotId"))
		name, ok := normalizeIndexPath(p)
		switch {
		case !ok:
			s.rep.skip("visualTreeUnsafePath")
			continue
		case !s.z.has(name):
			s.rep.skip("visualTreeMissing")
			continue
		}
		b, err := s.z.readAll(name, maxOfficialDoc)
		if err != nil {
			return err
		}
		td, err := parseObject(b)
		if err != nil {
			s.rep.skip("visualTreeSchema")
			continue
		}
		snap, err := members(td.get("snapshot"))
		schema, _ := str(td.get("schema"))
		id, _ := str(snap.get("snapshotId"))
		switch {
		case err != nil || schema != officialTreeSchema:
			s.rep.skip("visualTreeSchema")
			continue
		case id != want:
			s.rep.skip("visualTreeSnapshotId")
			continue
		}
		if err := keep(snap); err != nil {
			return err
		}
	}
	if len(index) == 0 {
		for _, it := range arrayItems(s.session.get("visualTreeSnapshots")) {
			if snap, err := members(it); err == nil {
				id, _ := str(snap.get("snapshotId"))
				if strings.TrimSpace(id) != "" {
					if err := keep(snap); err != nil {
						return err
					}
				}
			}
		}
	}
	newest := map[string]int{}
	for i, t := range list {
		if j, ok := newest[t.id]; ok {
			s.rep.skip("visualTreeDuplicate")
			if !t.e.at.After(list[j].e.at) {
				continue
			}
		}
		newest[t.id] = i
	}
	for i, t := range list {
		if newest[t.id] != i {
			if t.e.link != "" {
				os.Remove(t.e.link)
			}
			s.held -= t.e.held()
			continue
		}
		s.entries = append(s.entries, t.e) // counted as it was read
	}
	return nil
}

// images reads the frames session.json lists; a frame without its image fails the import,
// as it does the official one.
func (s *officialSource) images() error {
	for _, it := range arrayItems(s.session.get("images")) {
		f, err := members(it)
		if err != nil {
			return fmt.Errorf("%s: an image is not an object", officialSessionName)
		}
		id, _ := str(f.get("frameId"))
		format, _ := str(f.get("format"))
		if !safeSegment(id) {
			return fmt.Errorf("%s: frame id %q cannot name an entry", officialSessionName, id)
		}
		name := officialImageEntry(id)
		if !s.z.has(name) {
			if alt := officialImagesDir + id + "." + imageExt(format); s.z.has(alt) {
				name = alt
			} else {
				return fmt.Errorf("the session archive is missing image data for frame %q", id)
			}
		}
		ext := imageExt(format)
		p, err := s.extract(name, ext)
		if err != nil {
			return err
		}
		w, _ := integer(f.get("width"), 0, 1<<31-1)
		h, _ := integer(f.get("height"), 0, 1<<31-1)
		data := append(object{{"source", quoted("archive")}}, f...)
		s.add(entry{kind: KindFrame, at: timeOr(f.get("capturedAtUtc"), s.created), text: fmt.Sprintf("%dx%d", w, h), data: data.encode(),
			link: p, owned: true, ext: ext})
	}
	return nil
}

// artifacts reads every file under artifacts/ as an artifact record, and restores the
// records an archive we exported kept under extensionDir.
func (s *officialSource) artifacts() error {
	if s.z.has(extensionRecords) {
		if err := s.extension(); err != nil {
			return err
		}
	}
	for _, name := range s.z.under(officialArtifactsDir) {
		if strings.HasPrefix(name, extensionDir) || s.claimed[name] {
			continue
		}
		rel := strings.TrimPrefix(name, officialArtifactsDir)
		ext := artifactExt(path.Base(rel))
		p, err := s.extract(name, ext)
		if err != nil {
			return err
		}
		meta := object{{"fileName", quoted(path.Base(rel))}, {"relativePath", quoted(rel)}, {"sizeBytes", jsonNumber(float64(s.z.size(name)))}}
		at := s.created
		if m := s.z.files[name].Modified; m.Year() > 1980 {
			at = m.UTC() // the artifact's own time when the writer kept it (our export does)
		}
		s.add(entry{kind: KindArtifact, at: at, text: clip(path.Base(rel), maxTextBytes), data: meta.encode(), link: p, owned: true, ext: ext})
	}
	if s.session.get("appIcon") != nil && string(s.session.get("appIcon")) != "null" {
		s.rep.skip("appIcon")
	}
	return nil
}

// extension restores the records an official archive we exported carried for us.
func (s *officialSource) extension() error {
	rc, err := s.z.open(extensionRecords)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	for line := 1; ; line++ {
		b, err := readLine(br, maxRecordLineBytes)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", extensionRecords, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		s.files++
		e, err := importEntryFrom(b, s.z, s.dir, fmt.Sprintf("x%d", s.files), extensionBlobs, officialArtifactsDir)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", extensionRecords, line, err)
		}
		if e.kind == KindArtifact {
			var rec struct {
				Blob string `json:"blob"`
			}
			unmarshalChecked(b, &rec)
			if s.claimed == nil {
				s.claimed = map[string]bool{}
			}
			s.claimed[rec.Blob] = true
		}
		s.add(e)
	}
}

// importedState is the record of the import itself: the format, what was skipped, and
// the official session's description (identity, totals, analyses, task links, artifact
// and log stream descriptions) for a later export to the official format.
func (s *officialSource) importedState(doc object) entry {
	rest := make(object, 0, len(s.session))
	for _, m := range s.session {
		if !slices.Contains(carriedAsRecords, m.name) {
			rest = append(rest, m)
		}
	}
	o := object{{"format", quoted(FormatOfficial)}, {"schema", quoted(s.rep.Schema)}, {"savedAtUtc", doc.get("savedAtUtc")},
		{"session", rest.encode()}}
	if s.rep.Skipped != nil {
		sk := object{}
		for _, k := range slices.Sorted(maps.Keys(s.rep.Skipped)) {
			sk = append(sk, member{k, jsonNumber(float64(s.rep.Skipped[k]))})
		}
		o = append(o, member{"skipped", sk.encode()})
	}
	if o.get("savedAtUtc") == nil {
		o = o.without("savedAtUtc")
	}
	return entry{kind: KindState, at: s.created, text: "imported " + FormatOfficial, data: o.encode()}
}

// carriedAsRecords are the session members an import turns into records (and an export
// rebuilds from them).
var carriedAsRecords = []string{"images", "touches", "networkRequests", "visualTreeSnapshots", "logs", "metricChannels", "metrics",
	"annotations", "applicationEvents", "customProperties", "deviceProfile", "deviceProfileJson"}

// meta describes the session: as an archive we exported kept its description, else from
// session.json — its identity, and the platform and app state its device profile and
// appState say, as our host describes a live session.
func (s *officialSource) meta() importMeta {
	id, _ := str(s.session.get("sessionId"))
	name, _ := str(s.session.get("name")) // the session's display name: our label
	if s.info != nil {
		if obj, err := members(s.info); err == nil {
			return importMeta{id: id, info: obj.set("state", quoted("disconnected")).encode(), state: "disconnected", label: name}
		}
	}
	app, _ := str(s.session.get("appId"))
	client, _ := str(s.session.get("clientName"))
	o := object{{"id", quoted(id)}, {"appId", quoted(app)}, {"deviceId", quoted("")}, {"deviceName", quoted(client)},
		{"clientName", quoted(client)}, {"state", quoted("disconnected")}, {"connectedAt", officialTime(s.created)}}
	if p, err := members(s.profileJSON()); err == nil {
		o = append(o, member{"profile", p.encode()})
		if dev, err := members(p.get("device")); err == nil {
			if os, ok := str(dev.get("osName")); ok && os != "" {
				o = append(o, member{"platform", quoted(os)})
			}
		}
	}
	if st, ok := str(s.session.get("appState")); ok {
		if st = lower(st); st == "foreground" || st == "background" {
			o = append(o, member{"appState", quoted(st)})
		}
	}
	for _, m := range [][2]string{{"processSessionId", "processSessionId"}, {"configId", "configId"}, {"remoteAddress", "remoteAddr"}} {
		if v, ok := str(s.session.get(m[0])); ok && v != "" {
			o = append(o, member{m[1], quoted(v)})
		}
	}
	if t, ok := parseTime(s.session.get("lastUpdatedUtc")); ok {
		o = append(o, member{"disconnectedAt", officialTime(t)})
	}
	return importMeta{id: id, info: o.encode(), state: "disconnected", label: name}
}

func (s *officialSource) next() (entry, error) {
	if s.pos == len(s.entries) {
		return entry{}, io.EOF
	}
	e := s.entries[s.pos]
	s.entries[s.pos] = entry{}
	s.pos++
	return e, nil
}

func (s *officialSource) report() ImportReport { return s.rep }
func (s *officialSource) close()               {}

// arrayItems returns the items of a JSON array (checked already), nil for anything else.
func arrayItems(v jsontext.Value) []jsontext.Value {
	if v.Kind() != '[' {
		return nil
	}
	var out []jsontext.Value
	if unmarshalChecked(v, &out) != nil {
		return nil
	}
	return out
}

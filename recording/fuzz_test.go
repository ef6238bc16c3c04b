package recording

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/redact"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// checkEntries holds for whatever a parser makes of any input: data is a JSON object or
// nothing, summaries are bounded, network records hold no credential header value.
func checkEntries(t *testing.T, es []entry) {
	t.Helper()
	for _, e := range es {
		if !e.kind.Valid() {
			t.Fatalf("kind %q", e.kind)
		}
		if e.data != nil && (!jsontext.Value(e.data).IsValid() || jsontext.Value(e.data).Kind() != '{') {
			t.Fatalf("%s data is not a JSON object: %q", e.kind, e.data)
		}
		if len(e.text) > maxTextBytes+len("…") {
			t.Fatalf("%s text of %d bytes", e.kind, len(e.text))
		}
		if e.kind == KindNetwork {
			obj, _ := members(e.data)
			for _, list := range []string{"requestHeaders", "responseHeaders"} {
				var hs []jsontext.Value
				if v := obj.get(list); v.Kind() == '[' && unmarshalChecked(v, &hs) == nil {
					for _, h := range hs {
						ho, _ := members(h)
						name, _ := str(ho.get("name"))
						value, _ := str(ho.get("value"))
						if redact.SensitiveHeader(name) && value != Redacted {
							t.Fatalf("stored %s: %q", name, value)
						}
					}
				}
			}
		}
	}
}

func FuzzParseText(f *testing.F) {
	for _, line := range officialLines(f) {
		f.Add(line)
	}
	f.Add([]byte(`{"type":"CLIENT_TOUCH_INPUT","schema":"ansight.touches.v1","rows":[[1e308,0,0,0,0],[-1,2,3],"x"]}`))
	f.Add([]byte(`{"type":"CLIENT_NETWORK_REQUEST","request":{"schema":"ansight.network-request.v1","requestHeaders":{"Cookie":"a"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEntries(t, parser{}.text(data, time.Unix(1, 0)))
	})
}

func FuzzParseControl(f *testing.F) {
	f.Add("client.log", []byte(`{"data":"level=WARN msg=x"}`), true)
	f.Add("crash.handoff", []byte(`{"reportId":"r","report":{"kind":"anr","occurredAtUtc":"2026-01-01T00:00:00Z"}}`), true)
	f.Add("device.profile", []byte(`{"type":"DeviceAppProfile","sdk":{"name":"x"}}`), true)
	f.Add("app.state", []byte(`{"state":"FOREGROUND"}`), false)
	f.Add("session.properties", []byte(`null`), true)
	f.Fuzz(func(t *testing.T, action string, payload []byte, ok bool) {
		// The host hands over payloads its control parser accepted: valid JSON.
		if len(payload) > 0 && !jsontext.Value(payload).IsValid() {
			return
		}
		checkEntries(t, parser{}.control(action, payload, ok, "m", time.Unix(1, 0)))
	})
}

func FuzzParseBinary(f *testing.F) {
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 60, Flags: 3, CapturedAt: time.Unix(5, 0), Width: 2, Height: 2, JPEG: []byte{0xff, 0xd8}})
	f.Add(frame)
	f.Add([]byte("ASJP"))
	f.Add([]byte("ASFT\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEntries(t, parser{}.binary(data, time.Unix(1, 0)))
	})
}

func TestDetectLevel(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]Level{
		`time=2026-01-01T00:00:00Z level=WARN msg=hi`: LevelWarn,
		`{"time":"x","level":"error","msg":"x"}`:      LevelError,
		`[Warning] something`:                         LevelWarn,
		`2026-01-01 10:00:00.123 DEBUG db: query`:     LevelDebug,
		`E/ActivityManager: crash`:                    LevelError,
		`FATAL: out of memory`:                        LevelError,
		`an error happened somewhere`:                 LevelInfo, // "error" is not at the start
		`plain line`:                                  LevelInfo,
	} {
		if got := detectLevel(line); got != want {
			t.Errorf("detectLevel(%q) = %v, want %v", line, got, want)
		}
	}
}

// zipOf writes files (name → content, in order) as a zip archive.
func zipOf(t testing.TB, files ...[2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// exportedArchive is a real archive: a log line and a frame.
func exportedArchive(t testing.TB) []byte {
	t.Helper()
	r, err := Open(Options{Dir: t.TempDir(), MinFrameInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const sess = "app-001"
	now := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	r.RecordControl(sess, "client.log", []byte(`{"data":"[Error] boom"}`), true, "", now)
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 60, CapturedAt: now, Width: 1, Height: 1, JPEG: []byte{0xff, 0xd8}})
	r.RecordMessage(sess, transport.MessageBinary, frame, now)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.Export(context.Background(), sess, &b, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testManifest is a minimal valid manifest.
const testManifest = `{"schema":"ansight.recording-archive/v1","exportedAt":"2026-03-20T10:00:00Z","session":{"id":"x","origin":"live","firstAt":"2026-03-20T10:00:00Z","lastAt":"2026-03-20T10:00:00Z","records":1,"bytes":1,"dropped":0,"evicted":0},"counts":{},"records":"records.jsonl","versions":{"archive":1,"networkRequest":"","touches":"","frame":""},"traffic":{"calls":0,"errors":0,"denied":0,"transfers":0,"bytesSent":0,"bytesReceived":0}}`

// FuzzReadArchive reads arbitrary archives as Import does, record by record: an archive
// comes from elsewhere and is not trusted. Whatever it holds, reading ends with an error
// or io.EOF, every record read is of a known kind with object data, and every file it
// extracts lies in the directory given.
//
// testdata/fuzz/FuzzReadArchive/exported is a real archive (exportedArchive): built here,
// it would open SQLite in every fuzzing worker, which coverage instrumentation makes slow.
func FuzzReadArchive(f *testing.F) {
	f.Add(zipOf(f, [2]string{"manifest.json", testManifest}, [2]string{"records.jsonl",
		`{"seq":1,"session":"x","kind":"frame","at":"2026-03-20T10:00:00Z","blob":"blobs/../../../etc/passwd","size":1}`}))
	f.Add(zipOf(f, [2]string{"manifest.json", testManifest}, [2]string{"records.jsonl", `{"seq":1,"kind":"nope","at":"2026-03-20T10:00:00Z"}`}))
	f.Add(zipOf(f, [2]string{"manifest.json", testManifest}, [2]string{"records.jsonl",
		`{"seq":1,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","text":"hi","data":[1],"size":1}`}))
	f.Add([]byte("PK\x03\x04 not a zip"))
	f.Add(zipOf(f, [2]string{"manifest.json", strings.Replace(testManifest, `"origin":"live"`, `"origin":"live","label":"\u001b[2J\u202eexe.txt"`, 1)},
		[2]string{"records.jsonl", `{"seq":1,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","text":"hi","size":1}`}))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		z, err := openZip(bytes.NewReader(data), int64(len(data)), 64<<20, "")
		if err != nil {
			return
		}
		a, err := openArchive(z, dir)
		if err != nil {
			return
		}
		defer a.close()
		if label, err := CheckLabel(a.meta().label); err == nil && (len(label) > MaxLabel || strings.ContainsFunc(label, func(r rune) bool {
			return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
		})) {
			t.Fatalf("CheckLabel passed the archive's label %q", label)
		}
		for range 10000 {
			e, err := a.next()
			if err != nil {
				return
			}
			checkEntries(t, []entry{e})
			if e.link != "" && filepath.Dir(e.link) != dir {
				t.Fatalf("a file outside the import directory: %s", e.link)
			}
		}
	})
}

// TestImportAllOrNothing: an archive whose 601st record is bad is refused whole, although
// its first 500 were stored already.
func TestImportAllOrNothing(t *testing.T) {
	r := open(t, t.TempDir(), nil)
	var lines strings.Builder
	for i := range 600 {
		fmt.Fprintf(&lines, `{"seq":%d,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","text":"line %d","size":1}`+"\n", i+1, i)
	}
	lines.WriteString(`{"seq":601,"session":"x","kind":"nope","at":"2026-03-20T10:00:00Z","size":1}` + "\n")
	archive := zipOf(t, [2]string{"manifest.json", testManifest}, [2]string{"records.jsonl", lines.String()})
	if _, err := r.Import(context.Background(), bytes.NewReader(archive), int64(len(archive)), ImportOptions{}); err == nil ||
		!strings.Contains(err.Error(), "line 601") {
		t.Fatalf("Import = %v", err)
	}
	if list, _ := r.Sessions(context.Background()); len(list) != 0 || r.Recorded("x") || r.Usage().Records != 0 {
		t.Errorf("a refused archive left %+v (%d records)", list, r.Usage().Records)
	}
	good := exportedArchive(t)
	if sum, err := r.Import(context.Background(), bytes.NewReader(good), int64(len(good)), ImportOptions{}); err != nil || sum.Records != 2 {
		t.Errorf("a good archive: %+v, %v", sum, err)
	}
}

// FuzzImportArchive reads arbitrary archives as Import does, in whichever format they
// claim (ours, the official host's, an offline capture, encrypted with the password
// "correct horse battery"): whatever they hold, reading ends with an error or io.EOF,
// every entry read is of a known kind with object data, and every file extracted lies in
// the directory given. testdata/fuzz/FuzzImportArchive holds the fixtures of
// official_test.go, offline-capture-aes.zip and an export of ours.
func FuzzImportArchive(f *testing.F) {
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		z, err := openZip(bytes.NewReader(data), int64(len(data)), 64<<20, "correct horse battery")
		if err != nil {
			return
		}
		src, err := openSource(z, dir)
		if err != nil {
			return
		}
		defer src.close()
		for range 100000 {
			e, err := src.next()
			if err != nil {
				return
			}
			checkEntries(t, []entry{e})
			if e.link != "" && filepath.Dir(e.link) != dir {
				t.Fatalf("a file outside the import directory: %s", e.link)
			}
		}
	})
}

// FuzzSanitizeJSON holds the sanitize policy to valid JSON out for any JSON in, to
// leaving id-like members alone, and to doing nothing more on a second pass.
func FuzzSanitizeJSON(f *testing.F) {
	f.Add([]byte(officialTree))
	f.Add([]byte(`{"id":"user@example.com","email":"a@b.co","note":"call +44 20 7946 0958 or 4111 1111 1111 1111, key sk-abcdefghijklmnop","embedded":"{\"password\":\"x\"}"}`))
	f.Add([]byte(`["10.0.0.1", {"automationId":"iphone.model","text":"X"}, {"role":"secure","value":"1234"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v jsontext.Value
		if wire.Unmarshal(data, &v) != nil {
			return
		}
		s := newSanitizer(time.Unix(0, 0))
		out := s.json(v, false)
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("sanitised %q into invalid JSON %q", data, out)
		}
		if again := s.json(out, false); !bytes.Equal(again, out) {
			t.Fatalf("a second pass changed %q into %q", out, again)
		}
		if obj, err := members(v); err == nil {
			outObj, _ := members(out)
			for _, m := range obj {
				if protectedNames[normalizeName(m.name)] && !bytes.Equal(compact(m.value), compact(outObj.get(m.name))) {
					t.Fatalf("id-like %s changed: %s → %s", m.name, m.value, outObj.get(m.name))
				}
			}
		}
	})
}

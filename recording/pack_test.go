package recording

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// TestFramePacks records live frames over several batches and two runs of the recorder:
// they go into a few packs rather than a file each, and every frame reads back as sent.
func TestFramePacks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const sess = "app-001"
	frames := map[int64][]byte{} // by capture time (ms), what was sent
	record := func(r *Recorder, from, to int) {
		for i := from; i < to; i++ {
			img := bytes.Repeat([]byte{byte(i)}, 1000+i)
			at := time.UnixMilli(int64(1000 * (i + 1))).UTC()
			frame, err := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, Quality: 50, CapturedAt: at, Width: 1, Height: 1, JPEG: img})
			if err != nil {
				t.Fatal(err)
			}
			frames[at.UnixMilli()] = img
			r.RecordMessage(sess, transport.MessageBinary, frame, time.Now())
			if i%3 == 0 {
				waitIdle(t, r) // frames of one batch, then of the next
			}
		}
		waitIdle(t, r)
	}
	check := func(r *Recorder) {
		recs := all(t, r, Query{Session: sess, Kinds: []Kind{KindFrame}})
		if len(recs) != len(frames) {
			t.Fatalf("%d frames recorded, %d sent", len(recs), len(frames))
		}
		for _, rec := range recs {
			if !strings.HasSuffix(rec.Blob, ".jpg") {
				t.Errorf("frame %d is named %q", rec.Seq, rec.Blob)
			}
			f, err := r.OpenBlob(rec)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(f)
			f.Close()
			if want := frames[rec.At.UnixMilli()]; err != nil || !bytes.Equal(b, want) || rec.BlobBytes != int64(len(want)) {
				t.Errorf("frame %d reads back %d bytes (%v), sent %d", rec.Seq, len(b), err, len(want))
			}
		}
	}
	packs := func() int {
		entries, err := os.ReadDir(filepath.Join(dir, BlobDir, sess, string(KindFrame)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if filepath.Ext(e.Name()) != "."+packExt[KindFrame] {
				t.Errorf("%s beside the packs", e.Name())
			}
		}
		return len(entries)
	}

	r := open(t, dir, func(o *Options) { o.MinFrameInterval = -1 })
	r.packBytes = 8 << 10
	record(r, 0, 40)
	check(r)
	first := packs()
	if first < 4 || first > 8 {
		t.Errorf("%d packs for 40 frames of about 1 KiB in packs of 8 KiB", first)
	}
	r.Close()

	// A new run of the host starts a new pack, and reads the old ones.
	r = open(t, dir, func(o *Options) { o.MinFrameInterval = -1 })
	check(r)
	record(r, 40, 50)
	check(r)
	if n := packs(); n != first+1 {
		t.Errorf("%d packs after a restart and 10 more frames; %d before", n, first)
	}
}

// TestIdlePacksClosed: the writer keeps at most maxOpenPacks packs open; a session whose
// pack was closed goes on in the same pack (reopened, not a new file), and both frames
// read back.
func TestIdlePacksClosed(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), func(o *Options) { o.MinFrameInterval = -1 })
	frame := func(b byte) []byte {
		f, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, CapturedAt: time.UnixMilli(int64(b) + 1000), Width: 1, Height: 1, JPEG: []byte{b, b}})
		return f
	}
	for i := range maxOpenPacks + 1 {
		r.RecordMessage(fmt.Sprintf("s-%03d", i), transport.MessageBinary, frame(1), time.Now())
		waitIdle(t, r)
	}
	if n := len(r.packs); n != maxOpenPacks {
		t.Errorf("%d packs open, want %d", n, maxOpenPacks)
	}
	r.RecordMessage("s-000", transport.MessageBinary, frame(2), time.Now())
	waitIdle(t, r)
	recs := all(t, r, Query{Session: "s-000"})
	if len(recs) != 2 || recs[0].pack != recs[1].pack || recs[1].packOffset != recs[0].BlobBytes {
		t.Fatalf("s-000's frames: %+v", recs)
	}
	for i, rec := range recs {
		f, err := r.OpenBlob(rec)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if want := []byte{byte(i + 1), byte(i + 1)}; !bytes.Equal(b, want) {
			t.Errorf("frame %d reads %v, want %v", i, b, want)
		}
	}
}

// TestSchemaUpgrade opens a database of version 1, whose frames were files of their own:
// it is upgraded in place, its records read back, and new frames are packed.
func TestSchemaUpgrade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(filepath.Join(dir, DBName)))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO meta VALUES('schema', '1')`,
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, app_id TEXT NOT NULL DEFAULT '', device_id TEXT NOT NULL DEFAULT '',
			device_name TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT 'live',
			first_at INTEGER NOT NULL, last_at INTEGER NOT NULL, info BLOB, dropped INTEGER NOT NULL DEFAULT 0,
			evicted INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE records (seq INTEGER PRIMARY KEY, session TEXT NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL,
			level INTEGER NOT NULL DEFAULT 0, text TEXT NOT NULL DEFAULT '', channel INTEGER, value REAL NOT NULL DEFAULT 0,
			data BLOB, blob TEXT NOT NULL DEFAULT '', blob_bytes INTEGER NOT NULL DEFAULT 0, size INTEGER NOT NULL)`,
		`CREATE INDEX records_session ON records(session, seq)`,
		`INSERT INTO sessions(id, state, first_at, last_at) VALUES('app-001', 'disconnected', 1000000, 1000000)`,
		`INSERT INTO records(seq, session, kind, at, text, blob, blob_bytes, size) VALUES(1, 'app-001', 'frame', 1000000, '1x1', 'blobs/app-001/frame/1.jpg', 3, 67)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	old := filepath.Join(dir, BlobDir, "app-001", "frame", "1.jpg")
	os.MkdirAll(filepath.Dir(old), 0o700)
	if err := os.WriteFile(old, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := open(t, dir, func(o *Options) { o.MinFrameInterval = -1 })
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, CapturedAt: time.UnixMilli(2000), Width: 1, Height: 1, JPEG: []byte("new")})
	r.RecordMessage("app-001", transport.MessageBinary, frame, time.Now())
	waitIdle(t, r)
	recs := all(t, r, Query{Session: "app-001"})
	if len(recs) != 2 {
		t.Fatalf("records = %+v", recs)
	}
	for i, want := range []string{"old", "new"} {
		f, err := r.OpenBlob(recs[i])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != want {
			t.Errorf("record %d reads %q, want %q", recs[i].Seq, b, want)
		}
	}
	if recs[0].pack != "" || recs[1].pack == "" {
		t.Errorf("the old frame is a file and the new one packed: packs %q and %q", recs[0].pack, recs[1].pack)
	}
	var v string
	if err := r.db.QueryRowContext(context.Background(), `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil || v != strconv.Itoa(schemaVersion) {
		t.Errorf("schema version %q (%v), want %d", v, err, schemaVersion)
	}
	if s, err := r.Session(context.Background(), "app-001"); err != nil || s.Label != "" {
		t.Errorf("an upgraded session: %+v, %v; want no label", s, err)
	}
}

// TestIdlePackFullNotReopened: a pack that closeIdlePacks closed full is not reopened: its
// session's next frame starts a new pack.
func TestIdlePackFullNotReopened(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), func(o *Options) { o.MinFrameInterval = -1 })
	r.writeMu.Lock()
	r.packBytes = 2 // a frame of two bytes fills a pack
	r.writeMu.Unlock()
	frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, CapturedAt: time.UnixMilli(1000), Width: 1, Height: 1, JPEG: []byte{1, 1}})
	for i := range maxOpenPacks + 1 {
		r.RecordMessage(fmt.Sprintf("s-%03d", i), transport.MessageBinary, frame, time.Now())
		waitIdle(t, r)
	}
	r.writeMu.Lock()
	idle := len(r.idlePacks)
	r.writeMu.Unlock()
	if idle != 0 {
		t.Errorf("%d full packs kept to reopen", idle)
	}
	r.RecordMessage("s-000", transport.MessageBinary, frame, time.Now())
	waitIdle(t, r)
	if recs := all(t, r, Query{Session: "s-000"}); len(recs) != 2 || recs[0].pack == recs[1].pack || recs[1].packOffset != 0 {
		t.Fatalf("s-000's frames: %+v", recs)
	}
}

// TestTreePacks: live visual trees go into a pack of their own beside the frames', not a
// file each; every tree reads back as the app sent it, before and after a restart, in an
// export's archive and after its import (as a file of its own there), and deleting the
// session removes its packs.
func TestTreePacks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const sess = "app-001"
	trees := map[int64]string{} // by capture time (ms), the tree's payload
	record := func(r *Recorder, from, to int) {
		for i := from; i < to; i++ {
			at := time.UnixMilli(int64(1000 * (i + 1))).UTC()
			payload := fmt.Sprintf(`{"nodeCount":%d,"root":{"id":"n%d","text":"%s"}}`, i+1, i, strings.Repeat("x", i))
			trees[at.UnixMilli()] = payload
			line := fmt.Sprintf(`{"type":"CLIENT_VISUAL_TREE","capturedAtUtc":%q,"source":"sdk","payload":%s}`, at.Format(time.RFC3339Nano), payload)
			r.RecordMessage(sess, transport.MessageText, []byte(line), time.Now())
			frame, _ := wire.AppendASJP(nil, wire.ASJPFrame{Format: 1, CapturedAt: at, Width: 1, Height: 1, JPEG: []byte{byte(i)}})
			r.RecordMessage(sess, transport.MessageBinary, frame, time.Now())
			if i%4 == 0 {
				waitIdle(t, r)
			}
		}
		waitIdle(t, r)
	}
	check := func(r *Recorder) {
		t.Helper()
		recs := all(t, r, Query{Session: sess, Kinds: []Kind{KindTree}})
		if len(recs) != len(trees) {
			t.Fatalf("%d trees recorded, %d sent", len(recs), len(trees))
		}
		for _, rec := range recs {
			if !strings.HasSuffix(rec.Blob, ".json") || rec.pack == "" {
				t.Errorf("tree %d: file %q, pack %q", rec.Seq, rec.Blob, rec.pack)
			}
			if b, want := blobOf(t, r, rec), trees[rec.At.UnixMilli()]; string(b) != want || rec.BlobBytes != int64(len(want)) {
				t.Errorf("tree %d reads back %s, sent %s", rec.Seq, b, want)
			}
		}
	}
	files := func(kind Kind) int {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join(dir, BlobDir, sess, string(kind)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if filepath.Ext(e.Name()) != "."+packExt[kind] {
				t.Errorf("%s beside the %s packs", e.Name(), kind)
			}
		}
		return len(entries)
	}

	r := open(t, dir, func(o *Options) { o.MinFrameInterval = -1 })
	record(r, 0, 20)
	check(r)
	if n, f := files(KindTree), files(KindFrame); n != 1 || f != 1 {
		t.Errorf("%d tree packs and %d frame packs for 20 of each, want 1 and 1", n, f)
	}
	r.Close()
	r = open(t, dir, func(o *Options) { o.MinFrameInterval = -1 })
	check(r)
	record(r, 20, 25)
	check(r)
	if n := files(KindTree); n != 2 {
		t.Errorf("%d tree packs after a restart, want 2", n)
	}

	var archive bytes.Buffer
	if err := r.Export(context.Background(), sess, &archive, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	back := open(t, t.TempDir(), nil)
	sum, err := back.Import(context.Background(), bytes.NewReader(archive.Bytes()), int64(archive.Len()), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imported := all(t, back, Query{Session: sum.ID, Kinds: []Kind{KindTree}})
	if len(imported) != len(trees) {
		t.Fatalf("%d trees imported, %d exported", len(imported), len(trees))
	}
	for _, rec := range imported {
		if b, want := blobOf(t, back, rec), trees[rec.At.UnixMilli()]; string(b) != want || rec.pack != "" {
			t.Errorf("imported tree %d (pack %q) reads %s, want %s", rec.Seq, rec.pack, b, want)
		}
	}

	if err := r.Delete(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, BlobDir, sess)); !os.IsNotExist(err) {
		t.Errorf("the deleted session's packs: %v", err)
	}
	r.writeMu.Lock()
	left := len(r.packs) + len(r.idlePacks)
	r.writeMu.Unlock()
	if left != 0 {
		t.Errorf("%d packs kept for a deleted session", left)
	}
}

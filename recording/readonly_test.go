package recording

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// dirState fingerprints every file under dir: name, size, content.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		out[p] = fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
		return nil
	})
	return out
}

// TestOpenReadOnlyChangesNothing: with no host, the recordings are listed, browsed and
// exported in both formats, a session its stopped host left connected reads as
// disconnected, changes are refused — and not a byte of the store changes.
func TestOpenReadOnlyChangesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := Open(Options{Dir: dir, MinFrameInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	sess := liveRecording(t, w)
	w.RecordSession("left-connected", "connected", time.Now(), []byte(`{"id":"left-connected","appId":"a"}`))
	waitIdle(t, w)
	want := all(t, w, Query{Session: sess})
	w.Close()
	before := dirState(t, dir)

	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	list, err := r.Sessions(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("Sessions = %v, %v", list, err)
	}
	for _, s := range list {
		if s.State != "disconnected" || s.Records == 0 {
			t.Errorf("%s: state %q, %d records", s.ID, s.State, s.Records)
		}
	}
	if got := all(t, r, Query{Session: sess}); len(got) != len(want) {
		t.Errorf("%d records read, %d recorded", len(got), len(want))
	}
	for _, f := range []string{FormatAnsight, FormatOfficial} {
		if b := exportBytes(t, r, sess, ExportOptions{Format: f, Sanitize: f == FormatOfficial}); len(b) == 0 {
			t.Errorf("%s export is empty", f)
		}
	}
	if _, err := r.Import(context.Background(), bytes.NewReader(nil), 0, ImportOptions{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Import = %v", err)
	}
	if err := r.Delete(context.Background(), sess); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Delete = %v", err)
	}
	r.RecordMessage(sess, transport.MessageText, []byte(`{"type":"CLIENT_LOG","data":"x"}`), time.Now()) // ignored
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	after := dirState(t, dir)
	// SQLite's readers of a WAL database share its -shm index: it may create it (and an
	// empty -wal) beside the database, which is otherwise untouched.
	for _, name := range []string{DBName + "-shm", DBName + "-wal"} {
		if name == DBName+"-wal" {
			if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Size() != 0 {
				t.Errorf("reading wrote %d bytes of log", info.Size())
			}
		}
		delete(after, filepath.Join(dir, name))
	}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("reading changed the store:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := OpenReadOnly(t.TempDir()); err == nil {
		t.Error("opened a directory with no recordings")
	}
}

// TestReadOnlyBesideHost: a host that starts while the store is open read-only records as
// usual, and the reader follows what it writes.
func TestReadOnlyBesideHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := open(t, dir, nil)
	first.RecordControl("s", "client.log", []byte(`{"data":"one"}`), true, "", time.Now())
	waitIdle(t, first)
	first.Close()

	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	host := open(t, dir, nil) // the host starts meanwhile
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		done <- r.Follow(ctx, Query{Session: "s", Kinds: []Kind{KindLog}}, func(rec Record) error {
			seen <- rec.Text
			return nil
		})
	}()
	if got := <-seen; got != "one" {
		t.Fatalf("first record %q", got)
	}
	host.RecordControl("s", "client.log", []byte(`{"data":"two"}`), true, "", time.Now())
	waitIdle(t, host)
	if got := <-seen; got != "two" {
		t.Fatalf("followed %q", got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow = %v", err)
	}
}

// TestOpenArchive browses an official archive without importing it: its records are
// there, and Close leaves nothing behind.
func TestOpenArchive(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "official.zip")
	if err := os.WriteFile(p, officialArchive(t), 0o600); err != nil {
		t.Fatal(err)
	}
	r, sum, err := OpenArchive(context.Background(), p, 1<<30, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ID != "com-example-shop-042" || len(all(t, r, Query{Session: sum.ID, Kinds: []Kind{KindLog}})) != 3 {
		t.Errorf("archive %+v", sum)
	}
	dir := r.Dir()
	r.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the archive's store %s is still there: %v", dir, err)
	}
}

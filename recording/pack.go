package recording

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A pack holds a session's live frames, or its live visual trees, one after the other, each
// record naming its pack and offset: at ten frames a second per session, a file per frame
// made the writer create hundreds of files a second, each a journalled metadata operation
// that can block for a millisecond or more on a busy disk, holding a processor the
// sessions' readers need; an append to an open file costs a few microseconds. Trees came
// one in eleven of the official SDKs' messages under `ansight bench --record` (230 files a
// second for 50 sessions), and creating a file cost 1.1 ms of CPU in this VM's /tmp
// against 50 µs in /var/tmp: packed, as frames, they cost an append each. A pack is named
// after its first record's seq, grows to defaultPackBytes and is removed when the last of
// its records is evicted, so the disk holds less than one pack per session and kind more
// than the budgets count. OpenBlob reads a packed record as it reads a file, and exports
// and archives write each as a file of its own.
//
// Frames and trees imported from an archive stay files of their own, as do the files of
// other kinds (artifacts, reports), which the CLI lists for people to open.
const defaultPackBytes = 4 << 20

// packExt is a pack's file extension, by the kind it holds.
var packExt = map[Kind]string{KindFrame: "frames", KindTree: "trees"}

// packed says whether the writer appends live records of kind with a file to a pack.
func packed(kind Kind) bool { return packExt[kind] != "" }

// packKey names a session's pack of a kind in Recorder.packs and idlePacks.
func packKey(session string, kind Kind) string { return string(kind) + "/" + session }

// maxOpenPacks bounds the packs the writer keeps open between batches (the least recently
// written is closed first): reopening a session's pack for every batch would be a system
// call per frame again. A pack closed so, not full, is the one its session's next frame
// reopens (r.idlePacks): with more sessions sending frames than this, starting a new pack
// instead made the writer create a file for nearly every frame — what the per-frame
// files did, and what bounded `ansight bench --record --max-sessions` to about 130
// sessions on a busy machine, where opening an existing file costs a fraction of creating
// one. 256, not 64, since trees have packs too: 50 sessions sending both kinds reopened a
// pack for most records, and opening and closing them was a third of the writer's file
// work (BenchmarkWriteBatch's profile). A file descriptor each; the host already holds
// one per session's connection.
const maxOpenPacks = 256

// openPack is a session's pack in progress, open for appending.
type openPack struct {
	rel  string // relative to the recordings directory, with '/'
	f    *os.File
	size int64
	used int64 // when it was last written to (Recorder.packUse), for maxOpenPacks
}

// packWriter appends one batch's frames and trees to the sessions' packs (r.packs, which it keeps
// open for the next batches); r.writeMu is held.
type packWriter struct {
	r     *Recorder
	start map[*openPack]int64 // each pack's size before the batch: where a failed commit cuts it back to
	full  []*openPack         // packs the batch filled, closed by finish
}

// append adds a record of session of a packed kind (the record seq) to the session's pack
// of that kind, starting a new pack when there is none or it is full, and returns the pack
// and the record's offset.
func (w *packWriter) append(session string, kind Kind, seq int64, data []byte) (rel string, off int64, err error) {
	key := packKey(session, kind)
	p := w.r.packs[key]
	if p != nil && p.size >= w.r.packBytes {
		w.full = append(w.full, p)
		delete(w.r.packs, key)
		p = nil
	}
	w.r.packUse++
	if p == nil {
		rel := w.r.packPath(session, kind, seq)
		if idle, ok := w.r.idlePacks[key]; ok {
			rel = idle
			delete(w.r.idlePacks, key)
		}
		if p, err = w.r.openPack(rel); err != nil {
			return "", 0, err
		}
		p.used = w.r.packUse
		w.r.packs[key] = p
		w.r.closeIdlePacks()
	}
	if w.start == nil {
		w.start = map[*openPack]int64{}
	}
	if _, ok := w.start[p]; !ok {
		w.start[p] = p.size
	}
	p.used = w.r.packUse
	off = p.size
	n, err := p.f.Write(data)
	if err != nil {
		// Cut back a partial record: the next one starts where this one did.
		p.f.Truncate(off)
		return "", 0, err
	}
	p.size += int64(n)
	return p.rel, off, nil
}

// finish closes the packs the batch filled; when the batch was not committed, it first
// cuts every pack it wrote to back to its size before the batch.
func (w *packWriter) finish(committed bool) {
	if !committed {
		for p, size := range w.start {
			if p.f.Truncate(size) == nil {
				p.size = size
			}
		}
	}
	for _, p := range w.full {
		p.f.Close()
	}
	w.start, w.full = nil, nil
}

// closeIdlePacks closes the least recently written packs beyond maxOpenPacks; a later
// record of their session and kind reopens the pack unless it is full (r.idlePacks).
// r.writeMu is held.
func (r *Recorder) closeIdlePacks() {
	for len(r.packs) > maxOpenPacks {
		var oldest string
		for s, p := range r.packs {
			if oldest == "" || p.used < r.packs[oldest].used {
				oldest = s
			}
		}
		if p := r.packs[oldest]; p.size < r.packBytes {
			r.idlePacks[oldest] = p.rel
		}
		r.closePack(oldest)
	}
}

// closePack closes the pack in progress of a key (packKey), if any; r.writeMu is held.
func (r *Recorder) closePack(key string) {
	if p := r.packs[key]; p != nil {
		p.f.Close()
		delete(r.packs, key)
	}
}

// forgetPacks closes a session's packs in progress and forgets its idle ones (the session
// is deleted); r.writeMu is held.
func (r *Recorder) forgetPacks(session string) {
	for kind := range packExt {
		r.closePack(packKey(session, kind))
		delete(r.idlePacks, packKey(session, kind))
	}
}

// packPath names the pack a session's record seq of a packed kind starts.
func (r *Recorder) packPath(session string, kind Kind, seq int64) string {
	return fmt.Sprintf("%s/%s/%s/%d.%s", BlobDir, sessionDir(session), kind, seq, packExt[kind])
}

// openPack opens (creating) the pack at rel for appending.
func (r *Recorder) openPack(rel string) (*openPack, error) {
	abs := r.abs(rel)
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(abs), 0o700); err == nil {
			f, err = os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		}
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &openPack{rel: rel, f: f, size: info.Size()}, nil
}

// abs is the path of a file named relative to the recordings directory.
func (r *Recorder) abs(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

// openPacked opens a packed record's file (a frame's JPEG, a tree's JSON).
func (r *Recorder) openPacked(rec Record) (io.ReadSeekCloser, error) {
	rel := filepath.FromSlash(rec.pack)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("recording: invalid pack name %q", rec.pack)
	}
	f, err := os.Open(filepath.Join(r.dir, rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, rec.pack)
	}
	if err != nil {
		return nil, err
	}
	return packedFrame{io.NewSectionReader(f, rec.packOffset, rec.BlobBytes), f}, nil
}

// packedFrame reads one record of a pack.
type packedFrame struct {
	*io.SectionReader
	f *os.File
}

func (p packedFrame) Close() error { return p.f.Close() }

// removeUnusedPacks removes the packs (by name, each with its packKey) that no record
// refers to any more, after an eviction; r.writeMu is held.
func (r *Recorder) removeUnusedPacks(packs map[string]string) error {
	for rel, key := range packs {
		var used bool
		// pack != '' lets SQLite use the partial index records_pack.
		if err := r.db.QueryRow(`SELECT EXISTS(SELECT 1 FROM records WHERE pack = ? AND pack != '')`, rel).Scan(&used); err != nil {
			return err
		}
		if used {
			continue
		}
		if p := r.packs[key]; p != nil && p.rel == rel {
			r.closePack(key)
		}
		if r.idlePacks[key] == rel {
			delete(r.idlePacks, key)
		}
		os.Remove(r.abs(rel))
	}
	return nil
}

package recording

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A pack holds a session's live frames one after the other, each record naming its pack
// and offset: at ten frames a second per session, a file per frame made the writer create
// hundreds of files a second, each a journalled metadata operation that can block for a
// millisecond or more on a busy disk, holding a processor the sessions' readers need; an
// append to an open file costs a few microseconds. A pack is named after its first frame's
// seq, grows to defaultPackBytes and is removed when the last of its frames is evicted, so
// the disk holds less than one pack per session more than the budgets count.
//
// Frames imported from an archive stay files of their own, as do the files of other kinds
// (trees, artifacts, reports), which the CLI lists for people to open.
const defaultPackBytes = 4 << 20

// packExt is a pack's file extension.
const packExt = "frames"

// packWriter appends one batch's frames to the sessions' packs; r.writeMu is held. The
// packs in progress are in r.packs, by session.
type packWriter struct {
	r    *Recorder
	open map[string]*openPack // by session, for this batch
	full []*openPack          // packs this batch filled
}

// openPack is a pack opened for one batch.
type openPack struct {
	rel   string // relative to the recordings directory, with '/'
	f     *os.File
	start int64 // its size when the batch opened it: where a failed commit cuts it back to
	size  int64
}

// append adds a frame of session (the record seq) to the session's pack, starting a new
// pack when there is none or it is full, and returns the pack and the frame's offset.
func (w *packWriter) append(session string, seq int64, data []byte) (rel string, off int64, err error) {
	p := w.open[session]
	if p != nil && p.size >= w.r.packBytes {
		w.full = append(w.full, p)
		delete(w.open, session)
		delete(w.r.packs, session)
		p = nil
	}
	if p == nil {
		if p, err = w.openFor(session, seq); err != nil {
			return "", 0, err
		}
	}
	off = p.size
	n, err := p.f.Write(data)
	if err != nil {
		// Cut back a partial frame: the next one starts where this one did.
		p.f.Truncate(off)
		return "", 0, err
	}
	p.size += int64(n)
	return p.rel, off, nil
}

// openFor opens the session's pack in progress, or starts one with the frame seq when
// there is none or it is full.
func (w *packWriter) openFor(session string, seq int64) (*openPack, error) {
	var p *openPack
	if rel := w.r.packs[session]; rel != "" {
		if q, err := w.r.openPack(rel); err == nil && q.size < w.r.packBytes {
			p = q
		} else if err == nil {
			q.f.Close()
		}
	}
	if p == nil {
		var err error
		if p, err = w.r.openPack(w.r.packPath(session, seq)); err != nil {
			return nil, err
		}
	}
	if w.open == nil {
		w.open = map[string]*openPack{}
	}
	w.open[session] = p
	w.r.packs[session] = p.rel
	return p, nil
}

// finish closes the batch's packs; when the batch was not committed, it first cuts them
// back to their sizes before it.
func (w *packWriter) finish(committed bool) {
	for _, p := range w.open {
		w.full = append(w.full, p)
	}
	for _, p := range w.full {
		if !committed {
			p.f.Truncate(p.start)
		}
		p.f.Close()
	}
	w.open, w.full = nil, nil
}

// packPath names the pack a session's frame seq starts.
func (r *Recorder) packPath(session string, seq int64) string {
	return fmt.Sprintf("%s/%s/%s/%d.%s", BlobDir, sessionDir(session), KindFrame, seq, packExt)
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
	return &openPack{rel: rel, f: f, start: info.Size(), size: info.Size()}, nil
}

// abs is the path of a file named relative to the recordings directory.
func (r *Recorder) abs(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

// openPacked opens a packed frame.
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

// packedFrame reads one frame of a pack.
type packedFrame struct {
	*io.SectionReader
	f *os.File
}

func (p packedFrame) Close() error { return p.f.Close() }

// removeUnusedPacks removes the packs (of session, by name) that no record refers to any
// more, after an eviction; r.writeMu is held.
func (r *Recorder) removeUnusedPacks(packs map[string]string) error {
	for rel, session := range packs {
		var used bool
		// pack != '' lets SQLite use the partial index records_pack.
		if err := r.db.QueryRow(`SELECT EXISTS(SELECT 1 FROM records WHERE pack = ? AND pack != '')`, rel).Scan(&used); err != nil {
			return err
		}
		if used {
			continue
		}
		os.Remove(r.abs(rel))
		if r.packs[session] == rel {
			delete(r.packs, session)
		}
	}
	return nil
}

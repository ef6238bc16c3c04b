package tools

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ansight-go/ansight/wire"
)

// Transfer states, as written into rewritten descriptors ("status") and reported by
// OnTransfer.
const (
	StatusReceiving = "receiving"
	StatusComplete  = "complete"
	StatusFailed    = "failed"
)

// TransferProgress reports the state of one ASFT transfer to Options.OnTransfer.
type TransferProgress struct {
	TransferID string
	// FileName is the name announced by the app; Path is where the bytes go (empty when the
	// transfer failed before a file was created, or after a failure deleted it).
	FileName string
	Path     string
	MimeType string
	// ReceivedBytes so far, of SizeBytes announced (-1 when the app announced none).
	ReceivedBytes int64
	SizeBytes     int64
	// Status is StatusReceiving, StatusComplete or StatusFailed; Err says why it failed.
	Status string
	Err    error
}

// Artifact is one transfer announced by a result, once it has ended.
type Artifact struct {
	TransferID string
	// FileName as announced by the app; Path is the received file (empty when Err != nil).
	FileName string
	Path     string
	MimeType string
	// SizeBytes is the number of bytes received.
	SizeBytes int64
	// Err is nil when the file is complete.
	Err error
}

// maxTombstones bounds the remembered ids of ended transfers, whose late frames are dropped
// quietly instead of being counted as unknown.
const maxTombstones = 1024

// registry holds the transfers of one client, keyed by transfer id (never by request id:
// one response may announce several).
type registry struct {
	opts *Options

	rejected  atomic.Int64
	completed atomic.Int64
	failed    atomic.Int64

	mu        sync.Mutex
	active    map[string]*transfer
	tombs     map[string]struct{}
	tombRing  []string
	tombNext  int
	dir       string
	closedErr error
}

func newRegistry(opts *Options) *registry {
	return &registry{opts: opts, active: make(map[string]*transfer), tombs: make(map[string]struct{})}
}

func (r *registry) finished() (completed, failed int64) {
	return r.completed.Load(), r.failed.Load()
}

// transfer is one file being received.
type transfer struct {
	id       string
	fileName string
	mimeType string
	size     int64                  // -1 when not announced
	done     chan struct{}          // closed by registry.ended
	progress func(TransferProgress) // the announcing request's (WithProgress), or nil

	mu       sync.Mutex
	status   string
	file     *os.File
	path     string
	seq      int32
	received int64
	err      error
	lastSeen time.Time // registration or last frame, for the stall watchdog
}

// register creates one transfer per distinct transfer id in descs, reporting to progress
// (nil: only to Options.OnTransfer). Transfers that cannot start (bad id or size, limits,
// duplicate id, no file) are returned already failed.
func (r *registry) register(descs []descriptor, progress func(TransferProgress)) []*transfer {
	var out []*transfer
	seen := make(map[string]bool, len(descs))
	for _, d := range descs {
		if seen[d.transferID] {
			continue
		}
		seen[d.transferID] = true
		out = append(out, r.start(d, progress))
	}
	return out
}

func (r *registry) start(d descriptor, progress func(TransferProgress)) *transfer {
	t := &transfer{id: d.transferID, fileName: d.fileName, mimeType: d.mimeType, size: d.size,
		done: make(chan struct{}), progress: progress, status: StatusReceiving, lastSeen: time.Now()}
	reject := func(err error, tomb bool) *transfer {
		t.mu.Lock()
		t.failLocked(err)
		t.mu.Unlock()
		r.ended(t, tomb)
		return t
	}
	switch {
	case !validTransferID(d.transferID):
		return reject(fmt.Errorf("transfer id %q is not 32 lower-case hex digits", d.transferID), false)
	case d.sizeErr != nil:
		return reject(d.sizeErr, true)
	case d.size > r.opts.MaxArtifactBytes:
		return reject(fmt.Errorf("announced size %d exceeds the limit of %d bytes", d.size, r.opts.MaxArtifactBytes), true)
	}
	r.mu.Lock()
	if err := r.closedErr; err != nil {
		r.mu.Unlock()
		return reject(err, false)
	}
	_, active := r.active[t.id]
	_, tomb := r.tombs[t.id]
	if active || tomb {
		r.mu.Unlock()
		return reject(fmt.Errorf("%w: %s", ErrTransferInUse, t.id), false)
	}
	if len(r.active) >= r.opts.MaxTransfers {
		r.mu.Unlock()
		return reject(fmt.Errorf("too many concurrent transfers (limit %d)", r.opts.MaxTransfers), true)
	}
	dir, err := d.dir, error(nil)
	if dir == "" {
		dir, err = r.dirLocked()
	} else if err = os.MkdirAll(dir, 0o700); err != nil {
		err = fmt.Errorf("transfer directory: %w", err)
	}
	if err != nil {
		r.mu.Unlock()
		return reject(err, true)
	}
	r.active[t.id] = t
	r.mu.Unlock()

	f, path, err := createUnique(dir, sanitizeFileName(d.fileName, t.id))
	t.mu.Lock()
	failed := false
	switch {
	case t.status != StatusReceiving: // aborted by Close meanwhile, and retired there
		if err == nil {
			f.Close()
			os.Remove(path)
		}
	case err != nil:
		t.failLocked(err)
		failed = true
	default:
		t.file, t.path = f, path
	}
	p := t.progressLocked()
	t.mu.Unlock()
	if failed {
		r.ended(t, true)
	} else if p.Status == StatusReceiving {
		r.notify(t, p)
	}
	return t
}

// dirLocked returns the artifact directory, creating it on first use.
func (r *registry) dirLocked() (string, error) {
	if r.dir != "" {
		return r.dir, nil
	}
	if r.opts.ArtifactDir != "" {
		if err := os.MkdirAll(r.opts.ArtifactDir, 0o700); err != nil {
			return "", fmt.Errorf("artifact directory: %w", err)
		}
		r.dir = r.opts.ArtifactDir
		return r.dir, nil
	}
	dir, err := os.MkdirTemp("", "ansight-artifacts-")
	if err != nil {
		return "", fmt.Errorf("artifact directory: %w", err)
	}
	r.dir = dir
	return dir, nil
}

// ended retires a transfer that reached a final state, exactly once: it leaves the active
// set (its id is remembered so that late frames are dropped quietly when tomb is set), is
// counted and reported, and only then are its waiters released.
func (r *registry) ended(t *transfer, tomb bool) {
	r.mu.Lock()
	if r.active[t.id] == t {
		delete(r.active, t.id)
		tomb = true
	}
	if tomb {
		r.tombLocked(t.id)
	}
	r.mu.Unlock()
	t.mu.Lock()
	p := t.progressLocked()
	t.mu.Unlock()
	if p.Status == StatusComplete {
		r.completed.Add(1)
	} else {
		r.failed.Add(1)
		r.opts.Logger.Debug("tools: transfer failed", "transferId", t.id, "err", p.Err)
	}
	r.notify(t, p)
	close(t.done)
}

func (r *registry) tombLocked(id string) {
	if _, ok := r.tombs[id]; ok {
		return
	}
	if len(r.tombRing) < maxTombstones {
		r.tombRing = append(r.tombRing, id)
	} else {
		delete(r.tombs, r.tombRing[r.tombNext])
		r.tombRing[r.tombNext] = id
		r.tombNext = (r.tombNext + 1) % maxTombstones
	}
	r.tombs[id] = struct{}{}
}

// notify reports p, about t, to Options.OnTransfer and to t's request.
func (r *registry) notify(t *transfer, p TransferProgress) {
	if r.opts.OnTransfer != nil {
		r.opts.OnTransfer(p)
	}
	if t.progress != nil {
		t.progress(p)
	}
}

// handleFrame applies one binary ASFT message.
func (r *registry) handleFrame(data []byte) {
	f, err := wire.ParseFrame(data)
	if err != nil {
		r.rejected.Add(1)
		r.opts.Logger.Debug("tools: malformed ASFT frame", "err", err)
		// A corrupt frame of a known transfer makes the file unusable.
		if len(data) >= 40 {
			if t := r.lookup(string(data[8:40])); t != nil {
				r.abort(t, protocolError("ASFT frame", err))
			}
		}
		return
	}
	t := r.lookup(f.TransferID)
	if t == nil {
		r.mu.Lock()
		_, tomb := r.tombs[f.TransferID]
		r.mu.Unlock()
		if !tomb {
			r.rejected.Add(1)
			r.opts.Logger.Debug("tools: ASFT frame for an unknown transfer", "transferId", f.TransferID)
		}
		return
	}
	if t.apply(f, r.opts.MaxArtifactBytes) {
		r.ended(t, true)
		return
	}
	if r.opts.OnTransfer != nil || t.progress != nil {
		t.mu.Lock()
		p := t.progressLocked()
		t.mu.Unlock()
		r.notify(t, p)
	}
}

// receiving reports whether a transfer is in progress.
func (r *registry) receiving() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.active) > 0
}

func (r *registry) lookup(id string) *transfer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active[id]
}

// abort fails t with err unless it already ended.
func (r *registry) abort(t *transfer, err error) {
	t.mu.Lock()
	ended := t.status == StatusReceiving
	if ended {
		t.failLocked(err)
	}
	t.mu.Unlock()
	if ended {
		r.ended(t, true)
	}
}

// abortAll fails every active transfer and every later registration with err.
func (r *registry) abortAll(err error) {
	r.mu.Lock()
	r.closedErr = err
	ts := make([]*transfer, 0, len(r.active))
	for _, t := range r.active {
		ts = append(ts, t)
	}
	r.mu.Unlock()
	for _, t := range ts {
		r.abort(t, err)
	}
}

// apply processes one frame and reports whether the transfer ended with it. Sequence and
// offset must continue exactly where the previous frame stopped: a gap or an overlap fails
// the transfer, as does more data than announced.
func (t *transfer) apply(f wire.Frame, limit int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != StatusReceiving {
		return false
	}
	t.lastSeen = time.Now()
	if t.file == nil {
		t.failLocked(errors.New("no destination file"))
		return true
	}
	if f.Type == wire.FrameError {
		t.failLocked(fmt.Errorf("the app aborted the transfer: %s", printable(f.Payload, 512)))
		return true
	}
	if f.Sequence != t.seq {
		t.failLocked(fmt.Errorf("frame sequence %d, want %d", f.Sequence, t.seq))
		return true
	}
	if f.Offset != t.received {
		t.failLocked(fmt.Errorf("frame offset %d, want %d (gap or overlap)", f.Offset, t.received))
		return true
	}
	switch f.Type {
	case wire.FrameChunk:
		n := int64(len(f.Payload))
		switch {
		case t.size >= 0 && t.received+n > t.size:
			t.failLocked(fmt.Errorf("more than the announced %d bytes", t.size))
			return true
		case t.received+n > limit:
			t.failLocked(fmt.Errorf("more than the limit of %d bytes", limit))
			return true
		case t.seq == math.MaxInt32:
			t.failLocked(errors.New("too many frames"))
			return true
		}
		if _, err := t.file.Write(f.Payload); err != nil {
			t.failLocked(fmt.Errorf("write %s: %w", t.path, err))
			return true
		}
		t.received += n
		t.seq++
		return false
	case wire.FrameComplete:
		switch {
		case len(f.Payload) != 0:
			t.failLocked(errors.New("complete frame with a payload"))
			return true
		case t.size >= 0 && t.received != t.size:
			t.failLocked(fmt.Errorf("received %d of the announced %d bytes", t.received, t.size))
			return true
		}
		err := t.file.Close()
		t.file = nil
		if err != nil {
			os.Remove(t.path)
			t.failLocked(fmt.Errorf("close %s: %w", t.path, err))
			return true
		}
		t.status = StatusComplete
		return true
	}
	t.failLocked(fmt.Errorf("unknown frame type %d", f.Type))
	return true
}

// failLocked ends the transfer with err and deletes the partial file.
func (t *transfer) failLocked(err error) {
	if t.status != StatusReceiving {
		return
	}
	if t.file != nil {
		t.file.Close()
		t.file = nil
	}
	if t.path != "" {
		os.Remove(t.path)
		t.path = ""
	}
	t.status, t.err = StatusFailed, err
}

// idle returns how long the transfer has gone without a frame.
func (t *transfer) idle() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Since(t.lastSeen)
}

func (t *transfer) progressLocked() TransferProgress {
	return TransferProgress{TransferID: t.id, FileName: t.fileName, Path: t.path, MimeType: t.mimeType,
		ReceivedBytes: t.received, SizeBytes: t.size, Status: t.status, Err: t.err}
}

func (t *transfer) outcome() (outcome, Artifact) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := Artifact{TransferID: t.id, FileName: t.fileName, MimeType: t.mimeType, SizeBytes: t.received, Err: t.err}
	o := outcome{status: t.status, received: t.received}
	if t.status == StatusComplete {
		a.Path, o.path = t.path, t.path
	}
	return o, a
}

// validTransferID: 32 lower-case hex digits.
func validTransferID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// printable returns at most max bytes of b as a string safe to log and show: invalid UTF-8
// and control characters are replaced.
func printable(b []byte, max int) string {
	out := make([]rune, 0, min(len(b), max))
	n := 0
	for len(b) > 0 && n < max {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n += size
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			r = '?'
		}
		out = append(out, r)
	}
	return string(out)
}

// abortEach fails every transfer of ts that has not ended.
func (r *registry) abortEach(ts []*transfer, err error) {
	for _, t := range ts {
		r.abort(t, err)
	}
}

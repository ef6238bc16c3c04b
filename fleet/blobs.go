package fleet

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// A host keeps the bytes a requester fetches in chunks as blobs: artifact files (by path)
// and answers too large for one message (in memory). A blob is named by 128 random bits,
// handed to the requester alone in its answer: the name is the capability to read it.
// Blobs expire blobTTL after their last read, and the table is bounded.
const (
	blobTTL = 10 * time.Minute
	// maxBlobs bounds the blobs a host keeps; the least recently read go first.
	maxBlobs = 4096
	// maxBlobMemory bounds the bytes of in-memory blobs (large answers).
	maxBlobMemory = 256 << 20
)

var errNoBlob = errors.New("no such blob (it expired, or was never issued)")

type blob struct {
	path string // an artifact file, or
	data []byte // an answer
	size int64
	used time.Time
}

type blobs struct {
	mu     sync.Mutex
	byID   map[string]*blob
	memory int64
	now    func() time.Time
}

func newBlobs() *blobs { return &blobs{byID: map[string]*blob{}, now: time.Now} }

func newBlobID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand contract)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// addFile registers an artifact file.
func (t *blobs) addFile(path string, size int64) blobRef {
	return t.add(&blob{path: path, size: size})
}

// addData registers an answer.
func (t *blobs) addData(data []byte) blobRef {
	return t.add(&blob{data: data, size: int64(len(data))})
}

func (t *blobs) add(b *blob) blobRef {
	id := newBlobID()
	t.mu.Lock()
	defer t.mu.Unlock()
	b.used = t.now()
	t.byID[id] = b
	t.memory += int64(len(b.data))
	t.evictLocked(b.used)
	return blobRef{ID: id, Size: b.size}
}

// evictLocked drops expired blobs, then the least recently read ones while the table is
// over its bounds.
func (t *blobs) evictLocked(now time.Time) {
	for id, b := range t.byID {
		if now.Sub(b.used) > blobTTL {
			t.dropLocked(id, b)
		}
	}
	for len(t.byID) > maxBlobs || t.memory > maxBlobMemory {
		var oldestID string
		var oldest *blob
		for id, b := range t.byID {
			if oldest == nil || b.used.Before(oldest.used) {
				oldestID, oldest = id, b
			}
		}
		t.dropLocked(oldestID, oldest)
	}
}

func (t *blobs) dropLocked(id string, b *blob) {
	delete(t.byID, id)
	t.memory -= int64(len(b.data))
}

// read returns up to n bytes of blob id from off.
func (t *blobs) read(id string, off, n int64) ([]byte, error) {
	t.mu.Lock()
	b, ok := t.byID[id]
	if ok {
		b.used = t.now()
	}
	t.mu.Unlock()
	switch {
	case !ok:
		return nil, errNoBlob
	case off < 0 || n <= 0 || off > b.size:
		return nil, fmt.Errorf("chunk [%d, +%d) outside the blob's %d bytes", off, n, b.size)
	}
	n = min(n, b.size-off)
	if b.data != nil {
		return b.data[off : off+n], nil
	}
	f, err := os.Open(b.path)
	if err != nil {
		return nil, fmt.Errorf("artifact file: %w", err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil { // io.EOF: the file shrank since
		return nil, fmt.Errorf("artifact file: %w", err)
	}
	return buf, nil
}

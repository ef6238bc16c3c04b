package diag

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ansight-go/ansight/app/files"
)

// ProviderID is the artifact provider of the diagnostics: artifacts.query lists its
// artifacts, artifacts.request streams them.
const ProviderID = "diag"

// Ids of the artifacts the provider makes when they are requested (the profiles the tools
// captured are listed with ids of their own: "heap-1", "cpu-2", …).
const (
	HeapArtifactID       = "heap"       // a heap profile taken when requested
	GoroutinesArtifactID = "goroutines" // the goroutine dump (as diag.goroutines, bounded to MaxGoroutineArtifact)
)

// Bounds of what the diagnostics keep and serve.
const (
	// MaxKeptProfiles and MaxKeptBytes bound the profiles kept for artifacts.request: a new
	// one evicts the oldest beyond either bound.
	MaxKeptProfiles = 8
	MaxKeptBytes    = 32 << 20
	// MaxGoroutineArtifact bounds the goroutine dump served as an artifact.
	MaxGoroutineArtifact = 32 << 20
)

const pprofMimeType = "application/vnd.google.protobuf"

// profile is a captured profile kept for artifacts.request.
type profile struct {
	id, kind, fileName string
	seconds            float64
	created            time.Time
	data               []byte
}

// profiles keeps the last captured profiles, within MaxKeptProfiles and MaxKeptBytes.
type profiles struct {
	mu    sync.Mutex
	seq   int
	list  []*profile // oldest first
	bytes int
}

// add keeps a profile and returns it, evicting the oldest ones beyond the bounds.
func (k *profiles) add(kind string, now time.Time, secs float64, data []byte) *profile {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seq++
	p := &profile{id: kind + "-" + strconv.Itoa(k.seq), kind: kind, seconds: secs, created: now.UTC(), data: data,
		fileName: fmt.Sprintf("%s-%s-%d.pprof", kind, now.UTC().Format("20060102-150405"), k.seq)}
	k.list = append(k.list, p)
	k.bytes += len(data)
	for len(k.list) > 1 && (len(k.list) > MaxKeptProfiles || k.bytes > MaxKeptBytes) {
		k.bytes -= len(k.list[0].data)
		k.list = k.list[1:]
	}
	return p
}

// get returns the kept profile id (any case), or nil.
func (k *profiles) get(id string) *profile {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.list {
		if strings.EqualFold(p.id, id) {
			return p
		}
	}
	return nil
}

// snapshot returns the kept profiles, newest first.
func (k *profiles) snapshot() []*profile {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]*profile, len(k.list))
	for i, p := range k.list {
		out[len(out)-1-i] = p
	}
	return out
}

// provider is the diagnostics' artifact provider: the kept profiles, and a heap profile and
// a goroutine dump made when requested.
func (d *diag) provider() files.ArtifactProvider {
	return files.ArtifactProvider{
		ID: ProviderID, Name: "Go diagnostics", Category: "diagnostics",
		Description: "pprof profiles captured by diag.heap_profile and diag.cpu_profile, a heap profile and the goroutine dump taken on request.",
		Tags:        []string{"go", "pprof"},
		List:        d.listArtifacts,
		Create:      d.createArtifact,
	}
}

func (d *diag) listArtifacts(context.Context) ([]files.ArtifactInfo, error) {
	out := []files.ArtifactInfo{
		{ID: HeapArtifactID, Name: "Heap profile (now)", Kind: "profile", Category: "diagnostics",
			Description: "A pprof heap profile taken when it is requested.", MimeType: pprofMimeType, FileName: "heap.pprof"},
		{ID: GoroutinesArtifactID, Name: "Goroutine dump (now)", Kind: "trace", Category: "diagnostics",
			Description: "Every goroutine's state and stack, taken when it is requested.", MimeType: "text/plain", FileName: "goroutines.txt"},
	}
	for _, p := range d.kept.snapshot() {
		name := "Heap profile"
		if p.kind == "cpu" {
			name = fmt.Sprintf("CPU profile (%g s)", p.seconds)
		}
		out = append(out, files.ArtifactInfo{ID: p.id, Name: name + " at " + p.created.Format(time.RFC3339), Kind: "profile",
			Category: "diagnostics", MimeType: pprofMimeType, FileName: p.fileName,
			Metadata: map[string]string{"capturedAtUtc": p.created.Format(time.RFC3339Nano), "sizeBytes": strconv.Itoa(len(p.data))}})
	}
	return out, nil
}

func (d *diag) createArtifact(_ context.Context, req files.ArtifactRequest) (*files.Artifact, error) {
	switch id := req.ArtifactID; {
	case strings.EqualFold(id, HeapArtifactID):
		b, err := heapProfile()
		if err != nil {
			return nil, err
		}
		return &files.Artifact{Size: int64(len(b)), Body: bytes.NewReader(b)}, nil
	case strings.EqualFold(id, GoroutinesArtifactID):
		var b bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&limitWriter{w: &b, n: MaxGoroutineArtifact}, 2)
		return &files.Artifact{Size: int64(b.Len()), Body: &b}, nil
	default:
		p := d.kept.get(id)
		if p == nil {
			return nil, fmt.Errorf("no artifact %q: it was never captured, or newer profiles replaced it (%d are kept)", id, MaxKeptProfiles)
		}
		return &files.Artifact{CreatedAt: p.created, Size: int64(len(p.data)), Body: bytes.NewReader(p.data)}, nil
	}
}

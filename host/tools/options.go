package tools

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds the wait for one response, and the silence tolerated inside a
	// transfer (the reference host waits 20 s too).
	DefaultTimeout = 20 * time.Second
	// DefaultMaxArtifactBytes caps one received artifact.
	DefaultMaxArtifactBytes = 1 << 30
	// DefaultMaxTransfers caps the transfers received at the same time.
	DefaultMaxTransfers = 8
	// DefaultMaxPending caps the requests in flight; more wait for a slot.
	DefaultMaxPending = 64
)

// Options configures a Client. The zero value is usable: grant read, 20 s timeout, artifacts
// under a fresh temporary directory.
type Options struct {
	// SessionID is written in every request's sessionId.
	SessionID string
	// MaxToolPolicy is the paired client's grant. Tools above it are marked not executable
	// in catalogs and never called. Zero means read, the most restrictive grant.
	MaxToolPolicy wire.Policy
	// Timeout bounds the wait for each response (DefaultTimeout when zero) and the silence
	// tolerated between two frames of a transfer. The caller's context is honoured as well:
	// it may end the wait sooner, and a deadline later than Timeout extends it, for tools
	// that take longer (ui.wait up to 60 s, large downloads).
	// Writing a request is not bounded: a write blocks only when the app has stopped
	// reading, and ends with the connection (the host's keep-alive closes a connection whose
	// peer stops answering pings).
	Timeout time.Duration
	// ArtifactDir receives the session's artifacts. When empty, a directory is created under
	// os.TempDir on the first transfer.
	ArtifactDir string
	// MaxInflatedBytes caps a decompressed response payload (wire.DefaultMaxInflatedBytes
	// when zero).
	MaxInflatedBytes int64
	// MaxArtifactBytes caps one artifact (DefaultMaxArtifactBytes when zero).
	MaxArtifactBytes int64
	// MaxTransfers caps concurrent transfers (DefaultMaxTransfers when zero); a transfer
	// announced beyond it fails at once.
	MaxTransfers int
	// MaxPending caps requests in flight (DefaultMaxPending when zero).
	MaxPending int
	// ValidateArguments checks call arguments against the tool's argumentsSchema (fetching
	// the definition when it is not cached) and refuses mismatches before sending. Tools
	// with flattened-string arguments are not checked: the app does not check them either.
	ValidateArguments bool
	// Clock gives sentAt (time.Now when nil).
	Clock func() time.Time
	// NewRequestID returns request envelope ids. When nil, ids are 32 lower-case hex
	// digits: a random half drawn once per client, then a counter. An id that is still in
	// flight is refused.
	NewRequestID func() string
	// OnTransfer, when set, is called on every state change and chunk of a transfer. It runs
	// on the goroutine that calls HandleMessage (or Close) and must return quickly.
	OnTransfer func(TransferProgress)
	// OnTraffic, when set, is told about every request sent, every response matched to a
	// request and every transfer that ended (see wire.TrafficEvent). Like OnTransfer it runs on
	// the goroutine that sends or receives and must return quickly.
	OnTraffic func(wire.TrafficEvent)
	// Logger receives debug logs about dropped responses and frames (discarded when nil).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if !o.MaxToolPolicy.Valid() {
		o.MaxToolPolicy = wire.PolicyRead
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxInflatedBytes <= 0 {
		o.MaxInflatedBytes = wire.DefaultMaxInflatedBytes
	}
	if o.MaxArtifactBytes <= 0 {
		o.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	if o.MaxTransfers <= 0 {
		o.MaxTransfers = DefaultMaxTransfers
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.NewRequestID == nil {
		o.NewRequestID = sequentialIDs()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// sequentialIDs returns the default NewRequestID: ids unique per client (and, with the
// random half, across clients) without drawing randomness for every request. They are
// written idBatch at a time into one string and handed out as substrings of it, so that a
// request costs no allocation of its own for its id (strings are immutable: sharing the
// backing is safe, and an id kept long keeps at most one batch, 2 KiB, alive).
func sequentialIDs() func() string {
	var prefix [8]byte
	_, _ = rand.Read(prefix[:]) // never fails (crypto/rand contract since Go 1.24)
	var id [32]byte
	hex.Encode(id[:16], prefix[:])
	var (
		mu    sync.Mutex
		n     uint64
		batch string // ids n-len(batch)/32+1 … n, the next one first
	)
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		if batch == "" {
			var b strings.Builder // String makes no copy
			b.Grow(idBatch * len(id))
			for range idBatch {
				n++
				for i, v := len(id)-1, n; i >= 16; i, v = i-1, v>>4 {
					id[i] = "0123456789abcdef"[v&15]
				}
				b.Write(id[:])
			}
			batch = b.String()
		}
		next := batch[:len(id)]
		batch = batch[len(id):]
		return next
	}
}

// idBatch is how many request ids sequentialIDs writes at once.
const idBatch = 64

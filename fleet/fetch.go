package fleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Blobs are pulled in chunks of a message's size, fetchWindow requests at a time: the
// requester's pace is the flow control (a host never pushes more than was asked for), and
// a few requests in flight hide the round trips.
const fetchWindow = 4

// bytesAt writes into a byte slice at offsets.
type bytesAt []byte

func (b bytesAt) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(b)) {
		return 0, io.ErrShortWrite
	}
	return copy(b[off:], p), nil
}

// fetch pulls blob ref from host into w, reporting the bytes received so far to progress
// (which may be nil). Every chunk must come back at the size asked for.
func (c *Client) fetch(ctx context.Context, hostName string, ref blobRef, w io.WriterAt, progress func(int64)) error {
	chunk := c.nc.MaxPayload() - headroom
	if chunk <= 0 {
		chunk = 64 << 10
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	subject := c.subj.op(hostName, opBlob, "")
	var next, received atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range fetchWindow {
		wg.Go(func() {
			for ctx.Err() == nil {
				off := next.Add(chunk) - chunk
				if off >= ref.Size {
					return
				}
				n := min(chunk, ref.Size-off)
				data, err := c.exchange(ctx, hostName, subject, request{Blob: ref.ID, Offset: off, Length: n}, nil)
				if err == nil && int64(len(data)) != n {
					err = apiError(wire.CodeProtocol, "host %s sent %d bytes for a chunk of %d", hostName, len(data), n)
				}
				if err == nil {
					_, err = w.WriteAt(data, off)
				}
				if err != nil {
					once.Do(func() { first = c.backendError(err); cancel() })
					return
				}
				if r := received.Add(n); progress != nil {
					progress(r)
				}
			}
		})
	}
	wg.Wait()
	return first
}

// download saves the artifacts of a call or batch answered by host under the client's
// artifact directory (<dir>/<host>/<session>/<file>) and points their paths there. An
// artifact that cannot be fetched is reported failed, as a failed transfer is.
func (c *Client) download(ctx context.Context, hostName, sid string, list []hostapi.Artifact, blobs map[string]blobRef, progress func(hostapi.Progress)) {
	for i := range list {
		a := &list[i]
		ref, ok := blobs[a.TransferID]
		if !ok || a.Status != "complete" {
			continue
		}
		path, err := c.save(ctx, hostName, sid, a, ref, progress)
		if err != nil {
			a.Status, a.Error, a.Path = "failed", fmt.Sprintf("fetch from host %s: %v", hostName, err), ""
			continue
		}
		a.Path = path
	}
}

func (c *Client) save(ctx context.Context, hostName, sid string, a *hostapi.Artifact, ref blobRef, progress func(hostapi.Progress)) (string, error) {
	if c.opts.ArtifactDir == "" {
		return "", fmt.Errorf("this client has no artifact directory")
	}
	dir := filepath.Join(c.opts.ArtifactDir, hostName, safeName(sid, "session"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".fetch-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // the fetched file keeps its other name
	// Chunks arrive on several goroutines: progress is reported from one at a time, and
	// only forward.
	var mu sync.Mutex
	var reported int64
	report := func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		if progress != nil && n > reported {
			reported = n
			progress(hostapi.Progress{TransferID: a.TransferID, FileName: a.FileName, ReceivedBytes: n, SizeBytes: ref.Size})
		}
	}
	err = c.fetch(ctx, hostName, ref, f, report)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	path, err := linkUnique(tmp, dir, safeName(a.FileName, a.TransferID))
	if err != nil {
		return "", err
	}
	if progress != nil {
		progress(hostapi.Progress{TransferID: a.TransferID, FileName: a.FileName, ReceivedBytes: ref.Size, SizeBytes: ref.Size, Done: true})
	}
	return path, nil
}

// safeName is the last element of a name an app or host chose, fit for a file name.
func safeName(name, fallback string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == ".." || name == "/" || name == "" || strings.HasPrefix(name, ".") {
		name = fallback
	}
	return name
}

// linkUnique gives the file at tmp the name dir/name, or dir/N-name for the first N that
// is free, never replacing a file, and returns it.
func linkUnique(tmp, dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	for i := 2; ; i++ {
		err := os.Link(tmp, path)
		if err == nil {
			return path, nil
		}
		if !os.IsExist(err) || i > 10000 {
			return "", err
		}
		path = filepath.Join(dir, fmt.Sprintf("%d-%s", i, name))
	}
}

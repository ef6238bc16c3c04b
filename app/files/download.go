package files

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/wire"
)

type downloadArgs struct {
	Root       *string `json:"root,omitzero" jsonschema:"the root's alias (default: the root that holds path, else the first)"`
	Path       string  `json:"path" jsonschema:"the file, relative to the root"`
	ChunkBytes *int    `json:"chunkBytes,omitzero" jsonschema:"bytes per ASFT frame, clamped to 1024..524288 (default 65536)"`
	DownloadID *string `json:"downloadId,omitzero" jsonschema:"the caller's correlation id for the host-side file (default: the request id)"`
}

// handoff is the part of a result that announces its ASFT transfer, as the official SDKs
// write it. The official host registers the transfer only when these members are in the
// result object itself.
type handoff struct {
	DownloadID    string    `json:"downloadId" jsonschema:"the caller's downloadId, else the request id"`
	TransferID    string    `json:"transferId" jsonschema:"the id in the ASFT frame headers"`
	DeliveryMode  string    `json:"deliveryMode" jsonschema:"websocket_binary"`
	WireProtocol  string    `json:"wireProtocol" jsonschema:"ansight.file-transfer.v1"`
	Status        string    `json:"status" jsonschema:"queued when sent; a host rewrites it to receiving, complete or failed"`
	ChunkBytes    int       `json:"chunkBytes"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
	// Written by a host once the bytes have arrived.
	ArtifactPath  string `json:"artifactPath,omitzero"`
	ReceivedBytes int64  `json:"receivedBytes,omitzero"`
}

// newHandoff describes the transfer d of call c.
func newHandoff(c *app.Call, d wire.TransferDescriptor, downloadID *string, chunk int) handoff {
	id := str(downloadID)
	if id == "" {
		id = c.RequestID
	}
	return handoff{DownloadID: id, TransferID: d.TransferID, DeliveryMode: d.DeliveryMode, WireProtocol: d.WireProtocol,
		Status: d.Status, ChunkBytes: chunk, CapturedAtUtc: c.Now().UTC()}
}

type downloadResult struct {
	fileFields
	handoff
}

// chunkBytes is the chunk size a transfer asked for, in the official bounds.
func chunkBytes(p *int) int { return clamp(p, app.ChunkSize, app.MinChunkSize, app.MaxChunkSize) }

// download runs files.begin_binary_download: the file is opened now (through the root, so
// it cannot be outside it) and streamed after the result.
func (t *tree) download(ctx context.Context, c *app.Call, a downloadArgs) (*downloadResult, error) {
	g, f, fi, err := t.openRegular(str(a.Root), strings.TrimSpace(a.Path))
	if err == nil && fi.Size() > t.opts.MaxDownloadBytes {
		f.Close()
		err = failure(reasonTooLarge, "%s is %d bytes, more than the %d this app serves", g.slash(), fi.Size(), t.opts.MaxDownloadBytes)
	}
	if err != nil {
		return nil, toolFailure(CodeDownloadFailed, g, err)
	}
	chunk := chunkBytes(a.ChunkBytes)
	d := c.SendArtifact(fi.Name(), mimeType(fi.Name()), fi.Size(), f, app.WithChunkBytes(chunk)) // closes f
	return &downloadResult{fileFields: t.describeFile(g, fi), handoff: newHandoff(c, d, a.DownloadID, chunk)}, nil
}

// openFile opens the target for reading through its root.
func openFile(g target) (*os.File, error) {
	r, err := g.open()
	if err != nil {
		return nil, fsFailure(g, err)
	}
	defer r.Close() // an open file outlives its root
	f, err := r.OpenFile(g.rel, readFlags, 0)
	if err != nil {
		return nil, fsFailure(g, err)
	}
	return f, nil
}

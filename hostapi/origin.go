package hostapi

import (
	"context"
	"net/http"
	"unicode"

	"github.com/ansight-go/ansight/wire"
)

// WithOrigin returns b with every Call, Batch and UI operation that names no origin sent as
// origin's:
// how a client names itself once (the CLI's backend is WithOrigin(client, OriginCLI)).
func WithOrigin(b Backend, origin string) Backend {
	return originBackend{Backend: b, origin: origin}
}

type originBackend struct {
	Backend
	origin string
}

// Unwrap returns the Backend WithOrigin wraps.
func (o originBackend) Unwrap() Backend { return o.Backend }

func (o originBackend) Call(ctx context.Context, sessionID string, req CallRequest, progress func(Progress)) (*Call, error) {
	if req.Origin == "" {
		req.Origin = o.origin
	}
	return o.Backend.Call(ctx, sessionID, req, progress)
}

func (o originBackend) Batch(ctx context.Context, sessionID string, req BatchRequest, progress func(Progress)) (*Batch, error) {
	if req.Origin == "" {
		req.Origin = o.origin
	}
	return o.Backend.Batch(ctx, sessionID, req, progress)
}

func (o originBackend) UI(ctx context.Context, sessionID string, req UIRequest) (*UIOperation, error) {
	if req.Origin == "" {
		req.Origin = o.origin
	}
	return o.Backend.UI(ctx, sessionID, req)
}

// CheckOrigin refuses an origin longer than MaxOriginLength or holding anything but
// printable characters: it is recorded and shown as it is.
func CheckOrigin(origin string) error {
	if len(origin) > MaxOriginLength {
		return Errorf(http.StatusBadRequest, wire.CodeBadRequest, "origin is %d bytes; at most %d", len(origin), MaxOriginLength)
	}
	for _, r := range origin {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return Errorf(http.StatusBadRequest, wire.CodeBadRequest, "origin %q holds a character that is not printable", origin)
		}
	}
	return nil
}

package reliability

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// Tools of the load app. Each app also registers identityTool(tag), so that a catalog
// shows which app answered it.
const (
	// toolEcho (read) returns its nonce and the app's tag.
	toolEcho = "load.echo"
	// toolMark (write) does the same and counts its calls: a write tool goes through the
	// grant check of a local-mode (write) grant.
	toolMark = "load.mark"
)

func identityTool(tag string) string { return "load.id." + tag }

type echoIn struct {
	Nonce string `json:"nonce" jsonschema:"Opaque value returned unchanged."`
}

type echoOut struct {
	Nonce string `json:"nonce"`
	App   string `json:"app"`
	Count int64  `json:"count,omitzero"`
}

type empty struct{}

// newLoadApp returns an app whose tools answer with its tag, so that a response delivered
// to the wrong session or the wrong request is detected.
func newLoadApp(tag string, log *slog.Logger) (*app.App, error) {
	a := app.New(app.Options{Logger: log})
	var marks atomic.Int64
	err := app.Register(a, catalog.Definition{ID: toolEcho, Name: "Echo", Description: "Returns its nonce and the app's tag.",
		Category: "load", Policy: wire.PolicyRead},
		func(ctx context.Context, c *app.Call, in echoIn) (echoOut, error) {
			return echoOut{Nonce: in.Nonce, App: tag}, nil
		})
	if err != nil {
		return nil, err
	}
	err = app.Register(a, catalog.Definition{ID: toolMark, Name: "Mark", Description: "Counts a mark and returns its nonce and the app's tag.",
		Category: "load", Policy: wire.PolicyWrite},
		func(ctx context.Context, c *app.Call, in echoIn) (echoOut, error) {
			return echoOut{Nonce: in.Nonce, App: tag, Count: marks.Add(1)}, nil
		})
	if err != nil {
		return nil, err
	}
	err = app.Register(a, catalog.Definition{ID: identityTool(tag), Name: "Identity", Description: "Names the app " + tag + ".",
		Category: "load", Policy: wire.PolicyRead},
		func(ctx context.Context, c *app.Call, in empty) (empty, error) { return empty{}, nil })
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Command full uses every SDK package an app may import: app, app/ui, app/files,
// app/telemetry, app/diag, app/data, app/prefs and app/connect. The lean-module test checks
// that even this app compiles none of the tooling's dependencies — no SQLite either: app/data
// takes the app's own *sql.DB, whose driver the app brings (this one brings none: its
// database is opened by a driver name it is given).
package main

import (
	"context"
	"database/sql"
	"image"
	"image/color"
	"log"
	"log/slog"
	"os"
	"os/signal"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/data"
	"github.com/ansight-go/ansight/app/diag"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/app/prefs"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/app/ui"
)

// screen is a one-button screen: the smallest ui.Screen.
type screen struct{}

func (screen) Capture(context.Context) (*ui.Node, error) {
	return &ui.Node{ID: "ok", Type: "Button", Role: "button", Text: "OK", Actions: []string{ui.ActionTap},
		Bounds: &ui.Bounds{Width: 100, Height: 40}}, nil
}

func (screen) Perform(context.Context, string, ui.Action) (map[string]any, error) { return nil, nil }

func (screen) Render(context.Context) (image.Image, error) {
	img := image.NewGray(image.Rect(0, 0, 100, 40))
	img.Set(0, 0, color.White)
	return img, nil
}

func main() {
	a := app.New(app.Options{})
	tel := telemetry.New(telemetry.Options{Frames: ui.FrameSource(screen{})})
	slog.SetDefault(slog.New(tel.Handler(slog.NewTextHandler(os.Stderr, nil), nil)))
	dir, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open(os.Getenv("FULL_DB_DRIVER"), os.Getenv("FULL_DB"))
	if err != nil {
		log.Fatal(err)
	}
	settings, err := prefs.OpenFile("settings.json")
	if err != nil {
		log.Fatal(err)
	}
	for _, err := range []error{
		ui.Register(a, screen{}, ui.Options{}),
		data.Register(a, data.Options{Databases: []data.Database{{Name: "app", DB: db, ReadOnly: data.Opened}}}),
		prefs.Register(a, prefs.Options{Stores: map[string]prefs.Store{"settings": settings}}),
		files.Register(a, files.Options{Roots: []files.Root{{Alias: "cwd", Path: dir, ReadOnly: true}}}),
		diag.Register(a, diag.Options{Telemetry: tel}),
	} {
		if err != nil {
			log.Fatal(err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := connect.Run(ctx, a, connect.Local{}, connect.Options{AppID: "com.example.full", Telemetry: tel}); err != nil {
		log.Fatal(err)
	}
}

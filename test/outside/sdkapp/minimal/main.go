// Command minimal is the smallest SDK app: one tool, connected to the host on this machine
// until interrupted. It imports app and app/connect (with catalog and wire for the tool's
// definition), which is what the lean-module test measures.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

type greetArgs struct {
	Name string `json:"name"`
}

type greeting struct {
	Text string `json:"text"`
}

func main() {
	a := app.New(app.Options{})
	err := app.Register(a, catalog.Definition{
		ID: "demo.greet", Name: "Greet", Category: "demo", Policy: wire.PolicyRead,
		Description: "Greets someone by name.",
	}, func(ctx context.Context, c *app.Call, in greetArgs) (greeting, error) {
		return greeting{Text: "Hello, " + in.Name + "!"}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := connect.Run(ctx, a, connect.Local{}, connect.Options{AppID: "com.example.minimal"}); err != nil {
		log.Fatal(err)
	}
}

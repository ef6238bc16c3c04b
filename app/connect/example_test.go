package connect_test

import (
	"context"
	"log"
	"log/slog"
	"os"
	"os/signal"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
)

// A desktop app connects to the Ansight host on the same machine and stays connected until
// interrupted.
func ExampleRun() {
	a := app.New(app.Options{})
	// ... register tools on a ...

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := connect.Run(ctx, a, connect.Local{}, connect.Options{
		AppID:   "com.example.notes",
		AppName: "Notes",
		Logger:  slog.Default(),
		OnState: func(s connect.StateChange) { log.Printf("ansight: %v", s.State) },
	})
	if err != nil {
		log.Fatal(err) // e.g. a consumed invite: the error says what to do
	}
}

// An app on another device connects with an invite code issued by the host
// ("ansight pairing issue"), shown to the user as a QR code or text.
func ExampleRun_invite() {
	a := app.New(app.Options{})
	code := os.Getenv("ANSIGHT_INVITE") // "ans2:H4sI..."
	if err := connect.Run(context.Background(), a, connect.Invite{Code: code}, connect.Options{
		AppID: "com.example.notes",
	}); err != nil {
		log.Fatal(err)
	}
}

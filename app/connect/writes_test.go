package connect

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/ansight-go/ansight/transport"
)

// TestResponsesGoBeforeTelemetry: while the connection is backed up, a tool response
// written after telemetry was queued overtakes all of it but the message already being
// written.
func TestResponsesGoBeforeTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		app, host := transport.Pipe(transport.PipeOptions{Queue: 1})
		defer app.Close(transport.StatusNormalClosure, "")
		o := newWriteOrder(app)
		ctx := context.Background()
		send := func(msg string) {
			go func() {
				if err := o.send(ctx, transport.MessageText, []byte(msg)); err != nil {
					t.Error(err)
				}
			}()
			synctest.Wait()
		}
		send("frame 1") // queued: the host has not read yet
		send("frame 2") // being written: waits for room
		send("frame 3") // waits its turn
		send("sample 1")
		go func() {
			if err := o.first().Write(ctx, transport.MessageText, []byte("response")); err != nil {
				t.Error(err)
			}
		}()
		synctest.Wait()
		want := []string{"frame 1", "frame 2", "response", "frame 3", "sample 1"}
		for _, w := range want {
			_, b, err := host.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != w {
				t.Fatalf("the host read %q where %q was due (order %q)", b, w, want)
			}
			synctest.Wait()
		}
	})
}

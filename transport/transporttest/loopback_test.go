package transporttest_test

import (
	"context"
	"testing"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/transporttest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestEchoServer(t *testing.T) {
	t.Parallel()
	url := transporttest.NewEchoServer(t, transport.AcceptOptions{})
	// Several clients at once, each left open for the cleanup to deal with.
	for range 3 {
		c, err := transport.Dial(context.Background(), url, transport.DialOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []transport.MessageType{transport.MessageText, transport.MessageBinary} {
			if err := c.Write(context.Background(), typ, []byte("ping")); err != nil {
				t.Fatal(err)
			}
			gotType, got, err := c.Read(context.Background())
			if err != nil || gotType != typ || string(got) != "ping" {
				t.Fatalf("echo = %v %q %v", gotType, got, err)
			}
		}
		t.Cleanup(func() { transport.Abort(c) })
	}
}

func TestLoopbackPairOptions(t *testing.T) {
	t.Parallel()
	client, server := transporttest.NewLoopbackPair(t, transporttest.Options{
		Accept: transport.AcceptOptions{ReadLimit: 10},
	})
	if err := client.Write(context.Background(), transport.MessageText, make([]byte, 11)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := server.Read(context.Background()); transport.CloseStatus(err) != transport.StatusMessageTooBig {
		t.Fatalf("server Read = %v, want StatusMessageTooBig", err)
	}
}

func TestServerClosesWhenServeReturns(t *testing.T) {
	t.Parallel()
	url := transporttest.NewServer(t, transport.AcceptOptions{}, func(c transport.Conn) {})
	c, err := transport.Dial(context.Background(), url, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(transport.StatusNormalClosure, "")
	if _, _, err := c.Read(context.Background()); transport.CloseStatus(err) != transport.StatusNormalClosure {
		t.Fatalf("Read = %v, want a normal closure", err)
	}
}

package childproc

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

type echoConfig struct {
	Prefix string `json:"prefix"`
}

type message struct {
	Text string `json:"text"`
}

func init() {
	// echo answers every message with the configured prefix, then reports how it ended.
	Register("test-echo", func(ctx context.Context, p *Parent) error {
		var cfg echoConfig
		if err := p.Receive(ctx, &cfg); err != nil {
			return err
		}
		for {
			var m message
			err := p.Receive(ctx, &m)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if m.Text == "fail" {
				return errors.New("asked to fail")
			}
			if err := p.Send(message{Text: cfg.Prefix + m.Text}); err != nil {
				return err
			}
		}
	})
}

func TestRoundTrip(t *testing.T) {
	c, err := Start("test-echo", echoConfig{Prefix: "child: "})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		if err := c.Send(message{Text: text}); err != nil {
			t.Fatal(err)
		}
		var got message
		if err := c.Receive(&got); err != nil {
			t.Fatal(err)
		}
		if got.Text != "child: "+text {
			t.Fatalf("got %q", got.Text)
		}
	}
	if _, err := c.Stop(10 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestChildError: a role that fails ends the child; the parent's next Receive says so
// with the child's stderr.
func TestChildError(t *testing.T) {
	c, err := Start("test-echo", echoConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Send(message{Text: "fail"}); err != nil {
		t.Fatal(err)
	}
	var got message
	err = c.Receive(&got)
	if err == nil || !strings.Contains(err.Error(), "asked to fail") {
		t.Fatalf("Receive: %v, want the child's error", err)
	}
}

func TestUnknownRole(t *testing.T) {
	c, err := Start("no-such-role", echoConfig{})
	if err != nil {
		return // the config could not even be sent: the child is gone
	}
	defer c.Kill()
	var got message
	if err := c.Receive(&got); err == nil || !strings.Contains(err.Error(), "no role") {
		t.Fatalf("Receive: %v, want no such role", err)
	}
}

// TestNoChildOfAChild: a process started for a role that did not run it (its main does
// not call Main) cannot start children: a chain of them would never end.
func TestNoChildOfAChild(t *testing.T) {
	t.Setenv(roleEnv, "test-echo")
	if c, err := Start("test-echo", echoConfig{}); err == nil {
		c.Kill()
		t.Fatal("a child of a child was started")
	}
}

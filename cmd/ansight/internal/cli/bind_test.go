package cli

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestAddrInUse (issue 14): when another program holds the address a host command would
// listen on, the command fails with exit 2 and one line naming the address, what it is
// for, the flag that changes it and the address that picks a free port; the host never
// logs that it serves first (the player binds before the host starts).
func TestAddrInUse(t *testing.T) {
	holdUDP := func(t *testing.T) string {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.LocalAddr().String()
	}
	holdTCP := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l.Addr().String()
	}
	cases := []struct {
		name string
		hold func(*testing.T) string
		args func(addr string) []string
		want func(addr string) string
	}{
		{"enrollment", holdUDP,
			func(a string) []string { return []string{"host", "run", "--discovery", a, "--no-player"} },
			func(a string) string {
				return "ansight: the UDP enrollment (discovery) address " + a + " is already in use (by another program, or a host on another state directory): " +
					"choose another with --discovery (127.0.0.1:0 picks a free port; apps must then be told it)\n"
			}},
		{"websocket", holdTCP,
			func(a string) []string {
				return []string{"host", "run", "--discovery", "127.0.0.1:0", "--listen", a, "--no-player"}
			},
			func(a string) string {
				return "ansight: the WebSocket listener address " + a + " is already in use (by another program, or a host on another state directory): " +
					"choose another with --listen or --websocket-port (--listen 127.0.0.1:0 picks a free port)\n"
			}},
		{"websocket-port", holdTCP,
			func(a string) []string {
				_, port, _ := net.SplitHostPort(a)
				return []string{"host", "run", "--discovery", "127.0.0.1:0", "--websocket-port", port, "--no-player"}
			},
			func(a string) string {
				return "ansight: the WebSocket listener address " + a + " is already in use (by another program, or a host on another state directory): " +
					"choose another with --listen or --websocket-port (--listen 127.0.0.1:0 picks a free port)\n"
			}},
		{"player", holdTCP,
			func(a string) []string { return []string{"host", "run", "--discovery", "127.0.0.1:0", "--player", a} },
			func(a string) string {
				return "ansight: the player address " + a + " is already in use (by another program, or a host on another state directory): " +
					"choose another with --player (--player 127.0.0.1:0 picks a free port), or serve none with --no-player\n"
			}},
		{"demo-player", holdTCP,
			func(a string) []string { return []string{"demo", "--keep-running", "--player", a} },
			func(a string) string {
				return "ansight: the player address " + a + " is already in use (by another program, or a host on another state directory): " +
					"choose another with --player (--player 127.0.0.1:0 picks a free port), or serve none with --no-player\n"
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := tc.hold(t)
			// A safety net only: a command that wrongly starts is stopped, and fails below.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			var out, errw bytes.Buffer
			args := append([]string{"--state-dir", t.TempDir()}, tc.args(addr)...)
			code := Main(ctx, Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw})
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if got, want := errw.String(), tc.want(addr); got != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout: %q", out.String())
			}
		})
	}

	t.Run("json", func(t *testing.T) {
		addr := holdUDP(t)
		var out, errw bytes.Buffer
		code := Main(t.Context(), Env{Args: []string{"--state-dir", t.TempDir(), "--json", "host", "run", "--discovery", addr, "--no-player"},
			Stdout: &out, Stderr: &errw})
		if code != ExitUsage || !strings.Contains(out.String(), `"exitCode": 2`) || !strings.Contains(out.String(), addr+" is already in use") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errw.String())
		}
	})
}

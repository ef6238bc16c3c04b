package host

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// TestLANDualStack is issue 12.7: with LAN the host listens on one dual-stack socket per
// service, so phones reach it over IPv4 and IPv6 alike. An app enrolls and upgrades over
// each; invites advertise global IPv6 addresses after the IPv4 ones.
func TestLANDualStack(t *testing.T) {
	t.Parallel()
	if c, err := net.ListenPacket("udp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		c.Close()
	}
	h := newHarness(t, func(o *Options) {
		// The LAN defaults' addresses, on ephemeral ports.
		o.LAN, o.DiscoveryAddr, o.ListenAddr = true, "[::]:0", "[::]:0"
	})
	if !DualStack(h.DiscoveryAddr()) || !DualStack(h.WebSocketAddr()) {
		t.Fatalf("bound to %s and %s, want [::]", h.DiscoveryAddr(), h.WebSocketAddr())
	}
	for _, from := range []string{"127.0.0.1", "::1"} {
		t.Run(from, func(t *testing.T) {
			a := newApp("com.example.v" + strings.ReplaceAll(from, ":", "6"))
			to := netip.AddrPortFrom(netip.MustParseAddr(from), h.DiscoveryAddr().Port())
			c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			b, _ := a.local().Marshal()
			c.Write(b)
			c.SetReadDeadline(time.Time{})
			buf := make([]byte, 4096)
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("no reply over %s: %v", from, err)
			}
			res, err := pairing.ParseEnrollmentResult(buf[:n])
			if err != nil || !res.Accepted {
				t.Fatalf("reply %+v (%v)", res, err)
			}
			url := fmt.Sprintf("ws://%s/ws?token=%s", netip.AddrPortFrom(to.Addr(), uint16(res.WebSocketPort)), res.WebSocketToken)
			conn, err := transport.Dial(context.Background(), url, transport.DialOptions{})
			if err != nil {
				t.Fatalf("upgrade over %s: %v", from, err)
			}
			defer conn.Close(transport.StatusNormalClosure, "")
			if got := control(t, conn, sdkOpen); !strings.Contains(got, `"success":true`) {
				t.Fatal(got)
			}
		})
	}
	if !h.listensIPv6() {
		t.Error("a dual-stack host would not advertise IPv6 addresses")
	}
}

// TestWebSocketPortRange is issue 12.7: the WebSocket listener takes the first free port of
// the range given (firewall rules written for the official host's 56500–56599 work), and
// says so when none is free.
func TestWebSocketPortRange(t *testing.T) {
	t.Parallel()
	// Three consecutive ports, the first taken by someone else.
	var taken net.Listener
	var first int
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p+2 <= 65535 {
			taken, first = l, p
			break
		}
		l.Close()
	}
	defer taken.Close()
	r := PortRange{First: uint16(first), Last: uint16(first + 2)}
	h := newHarness(t, func(o *Options) { o.WebSocketPorts = r })
	got := int(h.WebSocketAddr().Port())
	if got <= first || got > first+2 {
		t.Fatalf("bound port %d, want one of %d-%d after %d", got, first+1, first+2, first)
	}
	if res := h.enroll(t, newApp("com.example.app").local()); res.WebSocketPort != got {
		t.Fatalf("enrollment issues port %d, listener on %d", res.WebSocketPort, got)
	}
	if h.WebSocketPorts() != r {
		t.Errorf("WebSocketPorts() = %v", h.WebSocketPorts())
	}

	// None free: Start says which range.
	s, err := New(Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", WebSocketPorts: PortRange{First: uint16(first), Last: uint16(first)}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("no free port in %d", first)) {
		t.Fatalf("Start = %v", err)
	}

	// A port in the address and a range: refused.
	if _, err := New(Options{ListenAddr: "127.0.0.1:56500", WebSocketPorts: OfficialWebSocketPorts}); err == nil {
		t.Error("ListenAddr with a port and a range accepted")
	}
}

func TestParsePortRange(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]PortRange{"56500-56599": OfficialWebSocketPorts, "56500": {56500, 56500}, " 1 - 2 ": {1, 2}} {
		if got, err := ParsePortRange(in); err != nil || got != want {
			t.Errorf("ParsePortRange(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0", "0-5", "5-4", "65536", "a-b", "1-2-3", "-5"} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			if r, err := ParsePortRange(in); err == nil {
				t.Errorf("ParsePortRange(%q) = %v, want an error", in, r)
			}
		})
	}
	if s := OfficialWebSocketPorts.String(); s != "56500-56599" {
		t.Errorf("String() = %q", s)
	}
}

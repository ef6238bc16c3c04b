package host

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// PortRange is a range of TCP ports, First to Last inclusive; the zero value is no range.
type PortRange struct {
	First, Last uint16
}

// OfficialWebSocketPorts is the range the official host leases its per-session WebSocket
// ports from: firewall rules written for it name these ports.
var OfficialWebSocketPorts = PortRange{First: 56500, Last: 56599}

// IsZero reports whether r is no range.
func (r PortRange) IsZero() bool { return r == PortRange{} }

// String writes "56500-56599", or "56500" for a single port.
func (r PortRange) String() string {
	if r.First == r.Last {
		return strconv.Itoa(int(r.First))
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// ParsePortRange reads "PORT" or "FIRST-LAST" (ports 1 to 65535, FIRST ≤ LAST).
func ParsePortRange(s string) (PortRange, error) {
	first, last, isRange := strings.Cut(strings.TrimSpace(s), "-")
	if !isRange {
		last = first
	}
	a, errA := strconv.ParseUint(strings.TrimSpace(first), 10, 16)
	b, errB := strconv.ParseUint(strings.TrimSpace(last), 10, 16)
	if errA != nil || errB != nil || a == 0 || b < a {
		return PortRange{}, fmt.Errorf("port range %q: want PORT or FIRST-LAST, ports 1 to 65535", s)
	}
	return PortRange{First: uint16(a), Last: uint16(b)}, nil
}

func (r PortRange) check() error {
	if r.IsZero() {
		return nil
	}
	if r.First == 0 || r.Last < r.First {
		return fmt.Errorf("host: WebSocket port range %d-%d is empty", r.First, r.Last)
	}
	return nil
}

// DualStack reports whether a bound address serves IPv4 and IPv6 alike: Go binds an
// unspecified address ("0.0.0.0" as "::") to one IPv6 socket that also takes IPv4 (as
// IPv4-mapped addresses) wherever the system allows it.
func DualStack(a netip.AddrPort) bool { return a.Addr().Is6() && a.Addr().IsUnspecified() }

// withIPv4Fallback runs listen on addr and, when that fails for the unspecified IPv6
// address (a system without IPv6), on the same port of 0.0.0.0.
func withIPv4Fallback[T any](addr string, listen func(string) (T, error)) (T, error) {
	v, err := listen(addr)
	if err == nil {
		return v, nil
	}
	h, p, serr := net.SplitHostPort(addr)
	if serr != nil || (h != "::" && h != "[::]") {
		return v, err
	}
	if v4, err4 := listen(net.JoinHostPort("0.0.0.0", p)); err4 == nil {
		return v4, nil
	}
	return v, err
}

// listenWebSocket binds the WebSocket listener: ListenAddr, or the first free port of
// WebSocketPorts on its host.
func (s *Server) listenWebSocket() (net.Listener, error) {
	tcp := func(a string) (net.Listener, error) { return net.Listen("tcp", a) }
	r := s.opts.WebSocketPorts
	if r.IsZero() {
		return withIPv4Fallback(s.opts.ListenAddr, tcp)
	}
	h, _, err := net.SplitHostPort(s.opts.ListenAddr)
	if err != nil {
		return nil, err
	}
	var last error
	for p := int(r.First); p <= int(r.Last); p++ {
		ln, err := withIPv4Fallback(net.JoinHostPort(h, strconv.Itoa(p)), tcp)
		if err == nil {
			return ln, nil
		}
		last = err
	}
	return nil, fmt.Errorf("no free port in %s: %w", r, last)
}

// listenDiscovery binds the UDP enrollment socket and sizes its receive buffer: a burst
// of enrollments is held there until the reader takes it.
func (s *Server) listenDiscovery() (*net.UDPConn, error) {
	udp, err := withIPv4Fallback(s.opts.DiscoveryAddr, func(a string) (*net.UDPConn, error) {
		ua, err := net.ResolveUDPAddr("udp", a)
		if err != nil {
			return nil, err
		}
		return net.ListenUDP("udp", ua)
	})
	if err != nil {
		return nil, err
	}
	st := EnrollmentStats{ReceiveBufferMax: receiveBufferMax()}
	if n := s.opts.EnrollmentReadBuffer; n > 0 {
		st.ReceiveBufferAsked = n
		if err := udp.SetReadBuffer(n); err != nil {
			s.log.Warn("host: enrollment socket receive buffer not set", "bytes", n, "err", err)
		}
	}
	st.ReceiveBuffer = receiveBuffer(udp)
	if st.ReceiveBufferMax > 0 && st.ReceiveBufferAsked > st.ReceiveBufferMax {
		s.log.Warn("host: the system caps the enrollment socket's receive buffer; a burst of enrollments may be dropped",
			"buffer", st.ReceiveBufferText())
	}
	s.enrollStats.buffer = st
	return udp, nil
}

package connect

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/pairing"
)

// udpHost is a fake enrollment host on a loopback UDP port. For every datagram it records
// the raw bytes and calls answer, which returns the datagrams to send back to the sender
// (each from the host's own socket unless a reply names another sender socket).
type udpHost struct {
	conn   *net.UDPConn
	answer func(req *pairing.EnrollmentConnect) []reply

	mu   sync.Mutex
	raws [][]byte
	reqs []*pairing.EnrollmentConnect

	wg sync.WaitGroup
}

// reply is one datagram the fake sends; from, when set, sends it from another socket.
type reply struct {
	data []byte
	from *net.UDPConn
}

func newUDPHost(t *testing.T, answer func(req *pairing.EnrollmentConnect) []reply) *udpHost {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	h := &udpHost{conn: conn, answer: answer}
	h.wg.Go(h.loop)
	t.Cleanup(func() {
		conn.Close()
		h.wg.Wait()
	})
	return h
}

func (h *udpHost) port() int { return h.conn.LocalAddr().(*net.UDPAddr).Port }

func (h *udpHost) loop() {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := h.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		raw := append([]byte(nil), buf[:n]...)
		req, err := pairing.ParseEnrollmentConnect(raw)
		h.mu.Lock()
		h.raws = append(h.raws, raw)
		if err == nil {
			h.reqs = append(h.reqs, req)
		}
		h.mu.Unlock()
		if err != nil || h.answer == nil {
			continue // a real host drops malformed datagrams silently
		}
		for _, r := range h.answer(req) {
			c := h.conn
			if r.from != nil {
				c = r.from
			}
			c.WriteToUDPAddrPort(r.data, netip.AddrPortFrom(from.Addr(), from.Port()))
		}
	}
}

func (h *udpHost) requests() []*pairing.EnrollmentConnect {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*pairing.EnrollmentConnect(nil), h.reqs...)
}

func (h *udpHost) rawRequests() [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]byte(nil), h.raws...)
}

// accept builds the official host's acceptance of req, exactly as it writes it.
func accept(req *pairing.EnrollmentConnect, wsPort int, token string) []byte {
	r := pairing.EnrollmentResult{
		RequestID: req.RequestID, Accepted: true, Reason: pairing.ReasonOK,
		ReasonMessage: "Device registered.", HostID: "host-1", HostName: "Test Host",
		Message:       "Connection accepted. WebSocket issued on port N.",
		WebSocketPort: wsPort, WebSocketPath: "/ws", WebSocketToken: token,
	}
	b, err := r.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

// refuse builds the official host's refusal of req.
func refuse(req *pairing.EnrollmentConnect, reason pairing.Reason) []byte {
	r := pairing.EnrollmentResult{
		RequestID: req.RequestID, Reason: reason, ReasonMessage: reason.Text(),
		HostID: "host-1", HostName: "Test Host", Message: reason.Text(),
	}
	b, err := r.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

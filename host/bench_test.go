package host

import (
	"net/netip"
	"testing"

	"github.com/ansight-go/ansight/pairing"
)

// BenchmarkEnroll is the normal path of an app that reconnects: one local-mode
// ENROLLMENT_CONNECT for an existing grant (rate limit, parse, authorize, mint a token,
// encode the result), then the upgrade's redemption of the token.
func BenchmarkEnroll(b *testing.B) {
	s, err := New(Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", HostName: "bench", EnrollmentBurst: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.wsAddr = netip.MustParseAddrPort("127.0.0.1:1") // as if listening
	a := newApp("com.example.bench")
	datagram, err := a.local().Marshal()
	if err != nil {
		b.Fatal(err)
	}
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	b.ReportAllocs()
	for b.Loop() {
		res, err := pairing.ParseEnrollmentResult(s.handleDatagram(datagram, src))
		if err != nil || !res.Accepted {
			b.Fatalf("%+v %v", res, err)
		}
		s.mu.Lock()
		t := s.redeemLocked(res.WebSocketToken, s.now())
		s.mu.Unlock()
		if t == nil {
			b.Fatal("the token did not redeem")
		}
	}
}

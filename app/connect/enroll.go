package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ansight-go/ansight/pairing"
)

// candidate is one place an ENROLLMENT_CONNECT is sent to: a host name or IP literal and a
// UDP port.
type candidate struct {
	host string
	port int
}

func (c candidate) String() string { return net.JoinHostPort(c.host, strconv.Itoa(c.port)) }

// enrollment is everything one enrollment attempt needs; the request lacks only its
// requestId, which is fresh for every datagram.
type enrollment struct {
	request    pairing.EnrollmentConnect
	candidates []candidate
	timeout    time.Duration // per candidate
	stateDir   string        // named in refusal hints
}

// endpoint is where the WebSocket upgrade goes.
type endpoint struct {
	url      *url.URL // ws://host:port/path, without the token
	token    string
	hostName string // for logs; empty in direct mode
}

// readBufferBytes is larger than pairing.MaxDatagramBytes so that an oversized reply is seen
// whole and refused by the parser rather than truncated into something parseable.
const readBufferBytes = 64 << 10

// enroll tries the candidates in order, one datagram each, as the official SDKs do: a
// timeout or socket error moves to the next candidate, a refusal stops at once (the host
// answered; another address of the same host would answer the same).
func enroll(ctx context.Context, e *enrollment, log *slog.Logger) (endpoint, error) {
	var tried []string
	var lastErr error
	for _, c := range e.candidates {
		addrs, err := resolve(ctx, c.host)
		if err != nil {
			if ctx.Err() != nil {
				return endpoint{}, ctx.Err()
			}
			log.Debug("ansight: cannot resolve enrollment candidate", "host", c.host, "err", err)
			tried, lastErr = append(tried, c.String()), err
			continue
		}
		for _, addr := range addrs {
			target := netip.AddrPortFrom(addr, uint16(c.port))
			ep, err := exchange(ctx, e, target, log)
			if err == nil {
				return ep, nil
			}
			if ctx.Err() != nil {
				return endpoint{}, ctx.Err()
			}
			if _, ok := errors.AsType[*EnrollmentError](err); ok {
				return endpoint{}, err
			}
			log.Debug("ansight: no enrollment answer", "target", target.String(), "err", err)
			tried, lastErr = append(tried, target.String()), err
		}
	}
	err := fmt.Errorf("%w on %s within %v each; is the Ansight host running and reachable?", ErrNoHost, strings.Join(tried, ", "), e.timeout)
	if lastErr != nil && !errors.Is(lastErr, errNoAnswer) {
		err = fmt.Errorf("%w (last error: %v)", err, lastErr)
	}
	return endpoint{}, err
}

// errNoAnswer is one candidate's silence until its timeout.
var errNoAnswer = errors.New("no answer")

// resolve returns an IP literal as is, or a name's addresses (IPv4 first, as the official
// hosts list them).
func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var v4, v6 []netip.Addr
	for _, a := range addrs {
		if a = a.Unmap(); a.Is4() {
			v4 = append(v4, a)
		} else {
			v6 = append(v6, a)
		}
	}
	return append(v4, v6...), nil
}

// exchange sends one ENROLLMENT_CONNECT to target and waits for its ENROLLMENT_RESULT. The
// socket is unconnected, like the .NET and Kotlin SDKs', so the host may answer from any
// port; only datagrams from the target's IP address are considered, and among those only a
// well-formed result (type ENROLLMENT_RESULT, ver 2) echoing this datagram's requestId.
// Anything else is ignored and the wait goes on.
func exchange(ctx context.Context, e *enrollment, target netip.AddrPort, log *slog.Logger) (endpoint, error) {
	network := "udp4"
	if target.Addr().Is6() {
		network = "udp6"
	}
	conn, err := net.ListenUDP(network, nil)
	if err != nil {
		return endpoint{}, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()

	req := e.request
	req.RequestID = pairing.NewToken(16)
	data, err := req.Marshal()
	if err != nil {
		return endpoint{}, fmt.Errorf("connect: encode ENROLLMENT_CONNECT: %w", err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(e.timeout)); err != nil {
		return endpoint{}, err
	}
	if ctx.Err() != nil {
		return endpoint{}, ctx.Err()
	}
	if _, err := conn.WriteToUDPAddrPort(data, target); err != nil {
		return endpoint{}, err
	}
	buf := make([]byte, readBufferBytes)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ctx.Err() != nil {
				return endpoint{}, ctx.Err()
			}
			if errors.Is(err, net.ErrClosed) || isTimeout(err) {
				return endpoint{}, errNoAnswer
			}
			// Transient receive errors (an ICMP port-unreachable reported on some systems)
			// end this candidate: the official SDKs move on after any socket error.
			return endpoint{}, err
		}
		if from.Addr().Unmap() != target.Addr() {
			log.Debug("ansight: ignoring enrollment datagram from another address", "from", from.String(), "target", target.String())
			continue
		}
		ep, decided, err := e.judge(req.RequestID, target, buf[:n], log)
		if decided {
			return ep, err
		}
	}
}

// judge decides what a datagram from the target's address means: nothing (decided false:
// malformed, or an answer to another request), a refusal (*EnrollmentError), or the
// endpoint to upgrade at.
func (e *enrollment) judge(requestID string, target netip.AddrPort, data []byte, log *slog.Logger) (ep endpoint, decided bool, err error) {
	res, err := pairing.ParseEnrollmentResult(data)
	if err != nil {
		log.Debug("ansight: ignoring malformed enrollment reply", "target", target.String(), "err", err)
		return endpoint{}, false, nil
	}
	if res.RequestID != requestID {
		log.Debug("ansight: ignoring enrollment reply to another request", "target", target.String())
		return endpoint{}, false, nil
	}
	hostDesc := target.String()
	if !res.Accepted {
		msg := res.ReasonMessage
		if msg == "" {
			msg = res.Message
		}
		return endpoint{}, true, newEnrollmentError(res.Reason, msg, hostDesc, e.stateDir)
	}
	u, err := webSocketURL(target.Addr(), res.WebSocketPort, res.WebSocketPath)
	if err != nil {
		// Not retried on another address: the same host would issue the same path.
		return endpoint{}, true, &EnrollmentError{Reason: "WebSocketHandoffUnavailable", Message: err.Error(), Host: hostDesc,
			hint: "the host accepted but issued an unusable WebSocket endpoint; will retry"}
	}
	return endpoint{url: u, token: res.WebSocketToken, hostName: res.HostName}, true, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// webSocketURL builds ws://<addr>:<port><path>: the address is the one the reply came from
// (bracketed when IPv6), the path gets a leading "/" when the host left it out, as the Kotlin
// and Swift SDKs do. A path carrying a query or fragment is refused: the token query is ours.
func webSocketURL(addr netip.Addr, port int, path string) (*url.URL, error) {
	path = strings.TrimSpace(path)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if strings.ContainsAny(path, "?#") || strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("webSocketPath %q is not a plain path", path)
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("webSocketPort %d is out of range", port)
	}
	return &url.URL{Scheme: "ws", Host: net.JoinHostPort(addr.String(), strconv.Itoa(port)), Path: path}, nil
}

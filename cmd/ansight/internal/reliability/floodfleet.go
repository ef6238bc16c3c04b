package reliability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/childproc"
	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/pairing"
)

// The enrollment flood's senders run in a child process (role floodRole): every app has a
// socket of its own, so the fleet needs as many file descriptors as apps, and its CPU is
// kept apart from the host's.
const floodRole = "reliability-enroll-flood"

func init() { childproc.Register(floodRole, runFloodFleet) }

// floodConfig is the child's configuration.
type floodConfig struct {
	Target  string       `json:"target"`   // the host's UDP enrollment address
	Apps    int          `json:"apps"`     // sockets, one ENROLLMENT_CONNECT each
	Flooder int          `json:"flooder"`  // datagrams the misbehaving socket sends meanwhile
	Wait    usage.Millis `json:"waitMs"`   // how long to wait for answers after the burst starts
	Window  usage.Millis `json:"windowMs"` // answers within this time of the burst's start count as in time
}

// floodStart is the parent's signal to send, once the child said it is ready.
type floodStart struct {
	Go bool `json:"go"`
}

// floodReady is the child's report that every socket is open.
type floodReady struct {
	Sockets int `json:"sockets"`
}

// floodResult is what the fleet saw.
type floodResult struct {
	Sent       int            `json:"sent"`
	InWindow   int            `json:"inWindow"` // answered within Window of the burst's start
	Late       int            `json:"late"`     // answered after Window, within Wait
	Accepted   int            `json:"accepted"`
	Refusals   map[string]int `json:"refusals,omitempty"`
	Mismatched int            `json:"mismatched"`   // answers that were not to the socket's request
	SendTime   usage.Millis   `json:"sendMs"`       // from the first datagram sent to the last
	LastAnswer usage.Millis   `json:"lastAnswerMs"` // from the burst's start to the last answer
	P50        usage.Millis   `json:"p50Ms"`        // from a datagram's send to its answer
	P99        usage.Millis   `json:"p99Ms"`
	Max        usage.Millis   `json:"maxMs"`
	// FlooderSent and FlooderAnswered are the misbehaving socket's datagrams and answers.
	FlooderSent     int `json:"flooderSent"`
	FlooderAnswered int `json:"flooderAnswered"`
	// CPU is the fleet's CPU time from the start signal to the report.
	CPU usage.Millis `json:"cpuMs"`
}

// floodApp is one app of the fleet: its socket and its request.
type floodApp struct {
	conn     *net.UDPConn
	id       string // requestId
	datagram []byte
	sent     time.Time
	answered atomic.Int64 // unix nanoseconds of the answer, 0 until then
	result   *pairing.EnrollmentResult
}

func floodIdentity(i int) *pairing.EnrollmentConnect {
	appID := fmt.Sprintf("dev.ansight.flood.app%05d", i)
	return &pairing.EnrollmentConnect{
		RequestID: pairing.NewToken(16), EnrollmentMode: pairing.ModeLocal, InviteID: pairing.LocalInviteID(appID),
		AppID: appID, DeviceID: fmt.Sprintf("flood-device-%05d", i), DeviceName: "flood", AccessToken: pairing.NewToken(32),
		ProcessSessionID: pairing.NewToken(16),
	}
}

func runFloodFleet(ctx context.Context, p *childproc.Parent) error {
	var cfg floodConfig
	if err := p.Receive(ctx, &cfg); err != nil {
		return err
	}
	target, err := netip.ParseAddrPort(cfg.Target)
	if err != nil {
		return err
	}
	apps := make([]*floodApp, cfg.Apps)
	defer func() {
		for _, a := range apps {
			if a != nil {
				a.conn.Close()
			}
		}
	}()
	for i := range apps {
		conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return fmt.Errorf("socket %d of %d: %w (raise the open-file limit: ulimit -n)", i+1, cfg.Apps, err)
		}
		req := floodIdentity(i)
		b, err := req.Marshal()
		if err != nil {
			return err
		}
		apps[i] = &floodApp{conn: conn, id: req.RequestID, datagram: b}
	}
	flooder, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return err
	}
	defer flooder.Close()
	// The misbehaving sender is one app enrolling in a loop: the same installation and
	// token, a new requestId each time.
	floods := make([][]byte, cfg.Flooder)
	greedy := floodIdentity(cfg.Apps)
	for i := range floods {
		greedy.RequestID = pairing.NewToken(16)
		if floods[i], err = greedy.Marshal(); err != nil {
			return err
		}
	}
	if err := p.Send(floodReady{Sockets: cfg.Apps + 1}); err != nil {
		return err
	}
	var start floodStart
	if err := p.Receive(ctx, &start); err != nil {
		return err
	}
	cpu0 := usage.ProcessCPU()

	// One reader per socket, as each app has; they stop at the deadline.
	t0 := time.Now()
	deadline := t0.Add(cfg.Wait.D())
	var readers sync.WaitGroup
	var pending atomic.Int64
	pending.Store(int64(len(apps)))
	allIn := make(chan struct{})
	for _, a := range apps {
		a.conn.SetReadDeadline(deadline)
		readers.Go(func() {
			buf := make([]byte, pairing.MaxDatagramBytes)
			n, _, err := a.conn.ReadFromUDPAddrPort(buf) // an app reads its one answer
			if err != nil {
				return
			}
			res, err := pairing.ParseEnrollmentResult(buf[:n])
			if err != nil || res.RequestID != a.id {
				a.result = &pairing.EnrollmentResult{Reason: "mismatched"}
			} else {
				a.result = res
			}
			a.answered.Store(time.Now().UnixNano())
			if pending.Add(-1) == 0 {
				close(allIn)
			}
		})
	}
	var flooderAnswered atomic.Int64
	flooder.SetReadDeadline(deadline)
	readers.Go(func() {
		buf := make([]byte, pairing.MaxDatagramBytes)
		for {
			if _, _, err := flooder.ReadFromUDPAddrPort(buf); err != nil {
				return
			}
			flooderAnswered.Add(1)
		}
	})

	// The burst: the apps' datagrams from one goroutine, the flooder's from another, as
	// fast as each can.
	var senders sync.WaitGroup
	var sendErr error
	var sendEnd time.Time
	senders.Go(func() {
		for _, a := range apps {
			a.sent = time.Now()
			if _, err := a.conn.WriteToUDPAddrPort(a.datagram, target); err != nil {
				sendErr = err
				return
			}
		}
		sendEnd = time.Now()
	})
	flooderSent := 0
	senders.Go(func() {
		for _, b := range floods {
			if _, err := flooder.WriteToUDPAddrPort(b, target); err != nil {
				return // a full send buffer: the flooder's loss
			}
			flooderSent++
		}
	})
	senders.Wait()
	if sendErr != nil {
		return fmt.Errorf("send: %w", sendErr)
	}
	select {
	case <-allIn:
	case <-time.After(time.Until(deadline)):
	case <-ctx.Done():
		return ctx.Err()
	}
	// The flooder's answers still in flight, then stop every reader.
	time.Sleep(100 * time.Millisecond)
	for _, a := range apps {
		a.conn.SetReadDeadline(time.Unix(1, 0))
	}
	flooder.SetReadDeadline(time.Unix(1, 0))
	readers.Wait()

	res := floodResult{Sent: len(apps), SendTime: usage.Millis(sendEnd.Sub(t0)), FlooderSent: flooderSent,
		FlooderAnswered: int(flooderAnswered.Load()), Refusals: map[string]int{}}
	var lat histogram
	var last time.Duration
	for _, a := range apps {
		at := a.answered.Load()
		if at == 0 {
			continue
		}
		answered := time.Unix(0, at)
		if answered.Sub(t0) <= cfg.Window.D() {
			res.InWindow++
		} else {
			res.Late++
		}
		last = max(last, answered.Sub(t0))
		lat.add(answered.Sub(a.sent))
		switch {
		case a.result.Reason == "mismatched":
			res.Mismatched++
		case a.result.Accepted:
			res.Accepted++
		default:
			res.Refusals[string(a.result.Reason)]++
		}
	}
	res.LastAnswer, res.Max = usage.Millis(last), usage.Millis(lat.maximum())
	res.P50, res.P99 = usage.Millis(lat.quantile(0.5)), usage.Millis(lat.quantile(0.99))
	res.CPU = usage.Millis(usage.ProcessCPU() - cpu0)
	if err := p.Send(res); err != nil {
		return err
	}
	// Keep the sockets open until the parent stops the child.
	var done floodStart
	if err := p.Receive(ctx, &done); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

package cli

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// A host binds up to three addresses (the UDP enrollment socket, the WebSocket listener,
// the player); another program, or another host on another state directory, may hold any
// of them. The system's "bind: address already in use" names neither what the address was
// for nor how to pick another, so the CLI says both, on one line, with exit code 2 (the
// address is something the user chose, or can choose, with a flag).

// listener names what a host listens on, for messages.
type listener int

const (
	listenerEnrollment listener = iota
	listenerWebSocket
	listenerPlayer
)

func (l listener) String() string {
	switch l {
	case listenerEnrollment:
		return "UDP enrollment (discovery) address"
	case listenerWebSocket:
		return "WebSocket listener address"
	}
	return "player address"
}

// bindFlags are the flags of a command that choose each listener's address ("" when the
// command picks that address itself).
type bindFlags struct {
	discovery, listen, player string
}

// Those of 'ansight host run', 'ansight conform' and 'ansight demo'.
var (
	hostRunBindFlags = bindFlags{discovery: "--discovery", listen: "--listen or --websocket-port", player: "--player"}
	conformBindFlags = bindFlags{discovery: "--discovery", listen: "--listen"}
	demoBindFlags    = bindFlags{discovery: "--discovery", player: "--player"}
)

// addrInUseError is a listener whose address is taken.
type addrInUseError struct {
	what listener
	addr string
	// flag changes the address ("" when the command chose it); anyPort is the address
	// that picks a free port for it.
	flag, anyPort string
	err           error
}

func (e *addrInUseError) Error() string {
	msg := fmt.Sprintf("the %s %s is already in use (by another program, or a host on another state directory)", e.what, e.addr)
	switch {
	case e.flag == "":
		return msg
	case e.what == listenerEnrollment:
		// A free enrollment port is valid, but apps look on the standard one unless told.
		return msg + fmt.Sprintf(": choose another with --discovery (%s picks a free port; apps must then be told it)", e.anyPort)
	case e.what == listenerWebSocket:
		return msg + fmt.Sprintf(": choose another with %s (--listen %s picks a free port)", e.flag, e.anyPort)
	}
	return msg + ": choose another with --player (--player 127.0.0.1:0 picks a free port), or serve none with --no-player"
}

func (e *addrInUseError) Unwrap() error { return e.err }

// addrInUse returns err as an addrInUseError (exit 2) when it is "address already in use",
// else err unchanged. flags names the command's flags for each listener; lan says the host
// serves the network (a free port is then asked for on every address).
func addrInUse(err error, what listener, addr string, flags bindFlags, lan bool) error {
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		addr = op.Addr.String() // the address tried: with a port range, the last one
	}
	flag := map[listener]string{listenerEnrollment: flags.discovery, listenerWebSocket: flags.listen, listenerPlayer: flags.player}[what]
	anyPort := "127.0.0.1:0"
	if lan && what != listenerPlayer {
		anyPort = "[::]:0"
	}
	return &exitError{code: ExitUsage, err: &addrInUseError{what: what, addr: addr, flag: flag, anyPort: anyPort, err: err}}
}

// hostStartErr is addrInUse for an error of host.Server.Start, which binds the UDP
// enrollment socket and then the WebSocket listener (TCP).
func hostStartErr(err error, cfg hostConfig) error {
	var op *net.OpError
	if !errors.Is(err, syscall.EADDRINUSE) || !errors.As(err, &op) {
		return err
	}
	if strings.HasPrefix(op.Net, "udp") {
		return addrInUse(err, listenerEnrollment, cfg.discovery, cfg.bindFlags, cfg.lan)
	}
	return addrInUse(err, listenerWebSocket, cfg.listen, cfg.bindFlags, cfg.lan)
}

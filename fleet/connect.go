package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Config says how to reach a fleet: the NATS server, the credentials, the fleet's name.
type Config struct {
	// URL is the NATS server, or a comma-separated list of a cluster's servers:
	// nats://host:4222, or tls://host:4222 for TLS. Credentials written in the URL
	// (nats://user:password@host) work, but other users of the machine can read a command
	// line: prefer the fields below.
	URL string
	// Fleet names the fleet (DefaultFleet when empty): its subjects are ansight.<Fleet>.…
	Fleet string
	// Credentials, at most one kind: User and Password, Token, NKeySeedFile (a file holding
	// an NKey seed, "SU…"), or CredsFile (a .creds file: a user JWT and its seed, as nsc
	// writes them for operator mode).
	User, Password string
	Token          string
	NKeySeedFile   string
	CredsFile      string
	// CAFile trusts the CA that signed the server's certificate (a private CA); CertFile and
	// KeyFile present a client certificate. TLS is used when the URL says tls://, when the
	// server requires it, or when any of these is set.
	CAFile, CertFile, KeyFile string
	// InboxPrefix is the prefix of the subjects this side receives answers on (default
	// "_INBOX"). A fleet whose users must not read each other's answers gives each
	// user a prefix of its own and lets it subscribe to that prefix alone (docs/fleet.md).
	InboxPrefix string
	// ReconnectWait is the pause between attempts to reach NATS again
	// (DefaultReconnectWait); the connection retries forever.
	ReconnectWait time.Duration
	// Logger receives connection events. It never sees a credential or a tool argument.
	Logger *slog.Logger
}

// fleetName is the fleet's name with its default.
func (c Config) fleetName() string {
	if c.Fleet == "" {
		return DefaultFleet
	}
	return c.Fleet
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// validate checks the configuration before anything connects.
func (c Config) validate() error {
	if strings.TrimSpace(c.URL) == "" {
		return errors.New("fleet: no NATS server URL")
	}
	if err := ValidName(c.fleetName()); err != nil {
		return fmt.Errorf("fleet name: %w", err)
	}
	kinds := 0
	for _, set := range []bool{c.User != "" || c.Password != "", c.Token != "", c.NKeySeedFile != "", c.CredsFile != ""} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return errors.New("fleet: give one kind of credentials: user and password, a token, an NKey seed or a .creds file")
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("fleet: a client certificate needs both its certificate and its key file")
	}
	return nil
}

// handlers are the connection callbacks of a member or a client.
type handlers struct {
	reconnected  func()
	disconnected func(error)
	asyncError   func(*nats.Subscription, error)
}

// dial connects to the NATS server. The connection then reconnects forever; callbacks run
// on the connection's callback goroutine.
func dial(c Config, name string, h handlers) (*nats.Conn, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	log := c.logger()
	wait := c.ReconnectWait
	if wait <= 0 {
		wait = DefaultReconnectWait
	}
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(wait),
		nats.Timeout(5 * time.Second),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil {
				log.Warn("fleet: lost the connection to NATS; reconnecting", "err", err)
			}
			if h.disconnected != nil {
				h.disconnected(err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("fleet: reconnected to NATS", "server", nc.ConnectedUrlRedacted())
			if h.reconnected != nil {
				h.reconnected()
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			log.Warn("fleet: NATS error", "err", err)
			if h.asyncError != nil {
				h.asyncError(sub, err)
			}
		}),
	}
	if c.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(c.InboxPrefix))
	}
	switch {
	case c.User != "" || c.Password != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	case c.NKeySeedFile != "":
		o, err := nats.NkeyOptionFromSeed(c.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("fleet: NKey seed %s: %w", c.NKeySeedFile, err)
		}
		opts = append(opts, o)
	case c.CredsFile != "":
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	}
	if c.CAFile != "" {
		opts = append(opts, nats.RootCAs(c.CAFile))
	}
	if c.CertFile != "" {
		opts = append(opts, nats.ClientCert(c.CertFile, c.KeyFile))
	}
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, &connectError{url: RedactURL(c.URL), err: err, refused: authRefusal(err)}
	}
	if !nc.HeadersSupported() {
		nc.Close()
		return nil, fmt.Errorf("fleet: the NATS server %s does not support message headers (2.2 or later is needed)", RedactURL(c.URL))
	}
	log.Debug("fleet: connected to NATS", "server", nc.ConnectedUrlRedacted(), "fleet", c.fleetName())
	return nc, nil
}

// RedactURL hides the credentials of the URLs in a server list, for messages and logs.
func RedactURL(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "://") {
			p = "nats://" + p // as the NATS client reads a bare host:port
		}
		u, err := url.Parse(p)
		if err != nil {
			parts[i] = "(unparsable URL)"
			continue
		}
		if u.User != nil {
			u.User = url.User("redacted")
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}

// flush waits until the server has processed everything sent so far (subscriptions
// included), within ctx and at most 10 s.
func flush(ctx context.Context, nc *nats.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return nc.FlushWithContext(ctx)
}

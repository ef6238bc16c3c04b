package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/wire"
)

// fleetFlags point the commands at a device lab (package fleet) instead of the resident
// host: 'host run' and 'demo --keep-running' join it, the other commands use it. Each flag
// falls back to an environment variable; secrets (a password, a token) are read from the
// environment or the URL only, never from a flag, where other users could read them.
type fleetFlags struct {
	url, name, user, creds, nkey, ca, cert, key, inbox string
}

// fleetEnv names the environment variable behind each flag, and the secrets'.
const (
	envFleet         = "ANSIGHT_FLEET"
	envFleetName     = "ANSIGHT_FLEET_NAME"
	envFleetUser     = "ANSIGHT_FLEET_USER"
	envFleetPassword = "ANSIGHT_FLEET_PASSWORD"
	envFleetToken    = "ANSIGHT_FLEET_TOKEN"
	envFleetCreds    = "ANSIGHT_FLEET_CREDS"
	envFleetNKey     = "ANSIGHT_FLEET_NKEY"
	envFleetCA       = "ANSIGHT_FLEET_TLS_CA"
	envFleetCert     = "ANSIGHT_FLEET_TLS_CERT"
	envFleetKey      = "ANSIGHT_FLEET_TLS_KEY"
	envFleetInbox    = "ANSIGHT_FLEET_INBOX"
)

func (f *fleetFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.url, "fleet", "", "use (or, for 'host run', join) the device lab at this NATS URL: nats://host:4222, tls://… ($"+envFleet+")")
	fl.StringVar(&f.name, "fleet-name", "", "the fleet's name, its subjects' namespace (default \""+fleet.DefaultFleet+"\"; $"+envFleetName+")")
	fl.StringVar(&f.user, "fleet-user", "", "NATS user; the password comes from $"+envFleetPassword+" ($"+envFleetUser+"; a token: $"+envFleetToken+")")
	fl.StringVar(&f.creds, "fleet-creds", "", "NATS .creds file (user JWT and seed) ($"+envFleetCreds+")")
	fl.StringVar(&f.nkey, "fleet-nkey", "", "file holding a NATS NKey seed ($"+envFleetNKey+")")
	fl.StringVar(&f.ca, "fleet-tls-ca", "", "CA certificate that signed the NATS server's ($"+envFleetCA+")")
	fl.StringVar(&f.cert, "fleet-tls-cert", "", "client certificate for NATS (with --fleet-tls-key) ($"+envFleetCert+")")
	fl.StringVar(&f.key, "fleet-tls-key", "", "client certificate's key ($"+envFleetKey+")")
	fl.StringVar(&f.inbox, "fleet-inbox", "", "prefix of the subjects answers come back on, when the NATS user is limited to its own ($"+envFleetInbox+")")
}

// or is v, or the environment variable's value.
func or(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}

// fleetConfig is the fleet the flags name, and whether they name one.
func (g *globals) fleetConfig() (fleet.Config, bool) {
	f := &g.fleet
	cfg := fleet.Config{
		URL: or(f.url, envFleet), Fleet: or(f.name, envFleetName),
		User: or(f.user, envFleetUser), Password: os.Getenv(envFleetPassword), Token: os.Getenv(envFleetToken),
		CredsFile: or(f.creds, envFleetCreds), NKeySeedFile: or(f.nkey, envFleetNKey),
		CAFile: or(f.ca, envFleetCA), CertFile: or(f.cert, envFleetCert), KeyFile: or(f.key, envFleetKey),
		InboxPrefix: or(f.inbox, envFleetInbox),
	}
	return cfg, cfg.URL != ""
}

// fleetClient connects to the fleet the flags name; the connection ends with the command.
func (g *globals) fleetClient(cfg fleet.Config) (*fleet.Client, error) {
	dir, err := g.stateDirPath()
	if err != nil {
		return nil, err
	}
	ctx := g.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	// Warnings (a host that did not list its sessions) go to stderr; --json stays clean.
	cfg.Logger = slog.New(slog.NewTextHandler(g.env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := fleet.Dial(ctx, fleet.ClientOptions{Config: cfg, ArtifactDir: filepath.Join(dir, "artifacts", "fleet"), Version: versionString(g.env.Version)})
	if err != nil {
		return nil, hostErr(err)
	}
	g.onExit(func() { c.Close() })
	return c, nil
}

// onExit runs f when the command ends.
func (g *globals) onExit(f func()) { g.cleanup = append(g.cleanup, f) }

// fleetHint is the next step after a failure to reach a fleet or one of its hosts.
const fleetHint = "check the fleet's NATS URL and credentials, and that the host is running ('ansight host run --fleet …'); 'ansight --fleet … session list' shows the hosts"

// fleetErr gives the fleet's own failures their exit codes and hints; others are nil.
func fleetErr(err error) error {
	if errors.Is(err, fleet.ErrCredentialsRefused) {
		return &exitError{code: ExitAccessDenied, err: err, hint: "check the fleet credentials: --fleet-user with $" + envFleetPassword + ", $" + envFleetToken + ", --fleet-nkey, --fleet-creds, or the ones in the URL"}
	}
	if errors.Is(err, fleet.ErrUnreachable) || wire.CodeOf(err) == wire.CodeHostUnavailable {
		return &exitError{code: ExitHostUnavailable, err: err, hint: fleetHint}
	}
	switch wire.CodeOf(err) {
	case wire.CodePermissionDenied:
		return &exitError{code: ExitAccessDenied, err: err, hint: "the fleet's NATS permissions for this user do not allow it"}
	case wire.CodeNotSupported:
		return &exitError{code: ExitUsage, err: err}
	case wire.CodeDisconnected, wire.CodeBusy:
		return &exitError{code: ExitHostUnavailable, err: err, hint: fleetHint}
	}
	return nil
}

// addFleetHostFlag registers --fleet-host-name on a command that runs a host.
func addFleetHostFlag(cmd *cobra.Command, name *string) {
	cmd.Flags().StringVar(name, "fleet-host-name", "", "this host's name in the fleet (default: the machine's host name; letters, digits, '-' and '_')")
}

// joinFleetConfig makes cfg join the fleet the flags name, if any, as host name (the
// machine's name by default).
func (g *globals) joinFleetConfig(cfg *hostConfig, name string, logger *slog.Logger) error {
	fc, ok := g.fleetConfig()
	if !ok {
		if name != "" {
			return usageErrorf("--fleet-host-name needs --fleet")
		}
		return nil
	}
	if name == "" {
		machine, _ := os.Hostname()
		name = fleet.HostName(machine)
	}
	if err := fleet.ValidName(name); err != nil {
		return usageErrorf("--fleet-host-name: %v", err)
	}
	fc.Logger = logger
	cfg.fleet, cfg.fleetHost = &fc, name
	return nil
}

// fleetHosts is 'host status --fleet --json'.
type fleetHosts struct {
	Schema string           `json:"schema"`
	Fleet  string           `json:"fleet"`
	Hosts  []fleet.Presence `json:"hosts"`
}

// printFleetHosts shows the hosts of the fleet, as their presence says.
func (g *globals) printFleetHosts(c *fleet.Client) error {
	hosts := c.Hosts()
	if g.json {
		if hosts == nil {
			hosts = []fleet.Presence{}
		}
		return writeJSON(g.env.Stdout, fleetHosts{Schema: "ansight.fleet-hosts/v1", Fleet: c.Fleet(), Hosts: hosts})
	}
	if len(hosts) == 0 {
		printf(g.env.Stdout, "no host in fleet %s: start one with 'ansight host run --fleet …'\n", c.Fleet())
		return nil
	}
	tw := newTable(g.env.Stdout)
	tw.header("HOST", "VERSION", "SESSIONS", "CONNECTED", "SINCE")
	for _, h := range hosts {
		tw.row(h.Host, h.Version, fmt.Sprint(h.Sessions), fmt.Sprint(h.Connected), ago(h.StartedAt))
	}
	tw.flush()
	return nil
}

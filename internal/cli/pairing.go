package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/skip2/go-qrcode"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/internal/control"
	"github.com/ansight-go/ansight/wire"
)

func newPairingCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pairing",
		Short: "Issue and manage invites that pair phones and other machines with this host",
		Long: `Apps on the same machine (desktop apps, simulators, emulators) pair in local mode on their
own. A phone, or an app on another machine, needs an invite: a single-use code (ans2:...) or
its QR code, valid for a limited time, carrying the grant (maxToolPolicy) of the pairing.
The host must serve the LAN for them: 'ansight host run --lan'.`,
	}
	var req control.InviteRequest
	var policy string
	var duration time.Duration
	var qr bool
	var qrFile string
	issue := &cobra.Command{
		Use:   "issue",
		Short: "Issue a single-use invite (code and QR)",
		Example: `  ansight pairing issue --qr
  ansight pairing issue --app-id com.example.app --duration 15m --max-tool-policy write`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if policy != "" {
				p, err := wire.ParsePolicy(policy)
				if err != nil {
					return usageErrorf("--max-tool-policy: %v", err)
				}
				req.MaxToolPolicy = p
			}
			if duration < 0 {
				return usageErrorf("--duration must be positive")
			}
			req.DurationSeconds = int64(duration.Round(time.Second) / time.Second)
			b, err := g.backend()
			if err != nil {
				return err
			}
			inv, err := b.IssueInvite(c.Context(), req)
			if err != nil {
				return hostErr(err)
			}
			if qr && qrFile == "" {
				dir, err := g.stateDirPath()
				if err != nil {
					return err
				}
				qrFile = filepath.Join(dir, "invites", inv.ID+".png")
			}
			if qrFile != "" {
				if err := writeQRPNG(inv.Code, qrFile); err != nil {
					return err
				}
			}
			if g.json {
				return writeJSON(g.env.Stdout, struct {
					*control.Invite
					QRPath string `json:"qrPath,omitzero"`
				}{inv, qrFile})
			}
			fmt.Fprintf(g.env.Stdout, "invite %s (grant %s, expires %s)\n\n%s\n\n", inv.ID, inv.MaxToolPolicy, inv.ExpiresAt.Local().Format("15:04:05"), inv.Code)
			if qr {
				q, err := qrcode.New(inv.Code, qrcode.Low)
				if err != nil {
					return fmt.Errorf("qr code: %w", err)
				}
				fmt.Fprintln(g.env.Stdout, q.ToSmallString(false))
				fmt.Fprintf(g.env.Stdout, "QR code image: %s\n", qrFile)
			}
			fmt.Fprintln(g.env.Stdout, "Scan the QR code or paste the code into the app; it can be used once.")
			return nil
		},
	}
	issue.Flags().StringVar(&req.AppID, "app-id", "", "only this app may use the invite (default: any app)")
	issue.Flags().DurationVar(&duration, "duration", 10*time.Minute, "how long the invite can be used")
	issue.Flags().StringVar(&policy, "max-tool-policy", "read", "the pairing's grant: read, write or critical")
	issue.Flags().BoolVar(&qr, "qr", false, "print a QR code on the terminal and save it as a PNG")
	issue.Flags().StringVar(&qrFile, "qr-file", "", "save the QR code PNG here")

	list := &cobra.Command{
		Use:   "list",
		Short: "List issued invites",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			inv, err := b.Invites(c.Context())
			if err != nil {
				return hostErr(err)
			}
			if g.json {
				return writeJSON(g.env.Stdout, inv)
			}
			if len(inv.Invites) == 0 {
				fmt.Fprintln(g.env.Stdout, "no invites; issue one with 'ansight pairing issue --qr'")
				return nil
			}
			tw := newTable(g.env.Stdout)
			tw.row("INVITE", "APP", tw.paint(colourDefault, "GRANT"), tw.paint(colourDefault, "STATE"), "EXPIRES")
			for _, i := range inv.Invites {
				app := i.AppID
				if app == "" {
					app = "*"
				}
				grant := string(i.MaxToolPolicy)
				tw.row(i.ID, app, tw.paint(policyColour(grant), grant), tw.paint(stateColour(i.State), i.State), i.ExpiresAt.Local().Format("2006-01-02 15:04"))
			}
			tw.flush()
			return nil
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke <invite-id>",
		Short: "Revoke an invite (and the pairings made with it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			if err := b.RevokeInvite(c.Context(), args[0]); err != nil {
				return hostErr(err)
			}
			if g.json {
				return writeJSON(g.env.Stdout, struct {
					Schema  string `json:"schema"`
					ID      string `json:"id"`
					Revoked bool   `json:"revoked"`
				}{"ansight.pairing-revoke/v1", args[0], true})
			}
			fmt.Fprintf(g.env.Stdout, "revoked %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(issue, list, revoke)
	return cmd
}

func writeQRPNG(code, path string) error {
	if err := mkdirFor(path); err != nil {
		return err
	}
	if err := qrcode.WriteFile(code, qrcode.Low, 512, path); err != nil {
		return fmt.Errorf("write QR code: %w", err)
	}
	return nil
}

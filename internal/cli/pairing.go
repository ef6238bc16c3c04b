package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/skip2/go-qrcode"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
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
	var req hostapi.InviteRequest
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
					*hostapi.Invite
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
		Short: "List issued invites and the pairings (grants) the host holds",
		Long: `List issued invites and the grants the host holds: one per paired app installation,
made by an app's first local-mode connection or by a device using an invite. Revoke either
with 'ansight pairing revoke <id>'.`,
		Args: cobra.NoArgs,
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
			if len(inv.Invites) == 0 && len(inv.Grants) == 0 {
				fmt.Fprintln(g.env.Stdout, "no invites or pairings; apps on this machine pair on their own, others with 'ansight pairing issue --qr'")
				return nil
			}
			if len(inv.Invites) > 0 {
				tw := newTable(g.env.Stdout).colourBy(2, policyColour).colourBy(3, stateColour)
				tw.header("INVITE", "APP", "GRANT", "STATE", "EXPIRES")
				for _, i := range inv.Invites {
					app := i.AppID
					if app == "" {
						app = "*"
					}
					grant := string(i.MaxToolPolicy)
					tw.row(i.ID, app, grant, i.State, i.ExpiresAt.Local().Format("2006-01-02 15:04"))
				}
				tw.flush()
			}
			if len(inv.Grants) > 0 {
				if len(inv.Invites) > 0 {
					fmt.Fprintln(g.env.Stdout)
				}
				tw := newTable(g.env.Stdout).colourBy(4, policyColour).colourBy(5, stateColour)
				tw.header("PAIRING", "MODE", "APP", "DEVICE", "GRANT", "STATE", "EXPIRES")
				for _, gr := range inv.Grants {
					policy := string(gr.MaxToolPolicy)
					tw.row(gr.ID, gr.Mode, gr.AppID, gr.DeviceName, policy, gr.State, gr.ExpiresAt.Local().Format("2006-01-02 15:04"))
				}
				tw.flush()
			}
			return nil
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke <invite-or-pairing-id>",
		Short: "Revoke an invite (and the pairings made with it) or one pairing",
		Long: `Revoke an invite or a pairing (grant), by the id 'ansight pairing list' shows. Revoking an
invite also revokes every pairing made with it. The live sessions of a revoked pairing end
at once, and the app's stored credential is refused from then on.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			r, err := b.Revoke(c.Context(), args[0])
			if err != nil {
				return hostErr(err)
			}
			if g.json {
				return writeJSON(g.env.Stdout, r)
			}
			if r.Kind == "invite" {
				printf(g.env.Stdout, "revoked invite %s: %d pairing(s) made with it revoked, %d session(s) ended\n", r.ID, len(r.GrantIDs), r.SessionsEnded)
			} else {
				printf(g.env.Stdout, "revoked pairing %s: %d session(s) ended\n", r.ID, r.SessionsEnded)
			}
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

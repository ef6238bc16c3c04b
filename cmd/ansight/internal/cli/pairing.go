package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skip2/go-qrcode"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/pairing"
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
	cmd.AddCommand(newPairingIssueCmd(g), newPairingListCmd(g), newPairingGetCmd(g), newPairingRevokeCmd(g), newPairingForgetCmd(g))
	return cmd
}

// issueOutput is pairing issue's --json output: the invite, where its QR code image is,
// and warnings (an invite a phone could not use).
type issueOutput struct {
	*hostapi.Invite
	QRPath   string   `json:"qrPath,omitzero"`
	Warnings []string `json:"warnings,omitempty"`
}

// pairingIssueOptions are the flags of 'ansight pairing issue'.
type pairingIssueOptions struct {
	req                      hostapi.InviteRequest
	policy, duration, qrFile string
	qr, codeOnly             bool
}

const pairingIssueLong = `Issue a single-use invite for one app (or, without an app id, any app: then it can be
used for 10 minutes only).

--duration is how long the pairing lasts (default 30 days; from 1 minute to 90 days, and
anything else is refused): Go durations (15m, 1h30m) and days, weeks and months (7d, 2w,
1mo = 30 days). The invite itself must be
used within the first 24 hours of it.

The official CLI's spellings work too: the app id as an argument or --app-id, and
--qr-output for --qr-file.`

func newPairingIssueCmd(g *globals) *cobra.Command {
	o := &pairingIssueOptions{}
	cmd := &cobra.Command{
		Use:   "issue [app-id]",
		Short: "Issue a single-use invite (code and QR)",
		Long:  pairingIssueLong,
		Example: `  ansight pairing issue com.example.app --qr
  ansight pairing issue com.example.app --duration 7d --max-tool-policy write --name "Ada's phone"
  ansight pairing issue com.example.app --code
  ansight pairing issue com.example.app --host-address 192.168.1.20 --qr-file invite.png`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return o.run(c.Context(), g, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.req.AppID, "app-id", "", "only this app may use the invite (default: any app)")
	f.StringVar(&o.req.AppName, "name", "", "the invite's name, as the app's pairing screen shows it (default: the app id)")
	f.StringVar(&o.duration, "duration", "", "how long the pairing lasts, 1 minute to 90 days: 15m, 12h, 7d, 2w, 1mo (default 30 days)")
	f.StringVar(&o.policy, "max-tool-policy", "read", "the pairing's grant: read, write or critical")
	f.StringSliceVar(&o.req.HostAddresses, "host-address", nil, "the address apps should reach this host at (repeat for several; default: this machine's LAN addresses)")
	f.BoolVar(&o.qr, "qr", false, "print a QR code on the terminal (when it fits) and save it as a PNG")
	f.StringVar(&o.qrFile, "qr-file", "", "save the QR code PNG here")
	f.BoolVar(&o.codeOnly, "code", false, "print the code alone (for scripts and clipboards)")
	aliasFlags(f, map[string]string{"qr-output": "qr-file"})
	return cmd
}

// run issues the invite, saves its QR code when asked, and prints it.
func (o *pairingIssueOptions) run(ctx context.Context, g *globals, args []string) error {
	if err := o.request(args); err != nil {
		return err
	}
	b, err := g.backend()
	if err != nil {
		return err
	}
	inv, err := b.IssueInvite(ctx, o.req)
	if err != nil {
		return hostErr(err)
	}
	var warnings []string
	if st, err := b.Status(ctx); err == nil && !st.LAN {
		warnings = append(warnings, "this host listens on loopback only: a phone or another machine cannot reach it with this invite. "+
			"Restart it with 'ansight host run --lan' (apps on this machine pair on their own, without an invite)")
	}
	qrFile, err := o.saveQR(g, inv)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		printf(g.env.Stderr, "warning: %s\n", w)
	}
	switch {
	case g.json:
		return writeJSON(g.env.Stdout, issueOutput{inv, qrFile, warnings})
	case o.codeOnly:
		fmt.Fprintln(g.env.Stdout, inv.Code)
		return nil
	}
	return o.print(g.env.Stdout, inv, qrFile)
}

// request reads the arguments and flags into the invite request.
func (o *pairingIssueOptions) request(args []string) error {
	if len(args) == 1 {
		if o.req.AppID != "" && o.req.AppID != args[0] {
			return usageErrorf("give the app id as an argument or with --app-id, not both")
		}
		o.req.AppID = args[0]
	}
	if o.codeOnly && o.qr {
		return usageErrorf("give --code or --qr, not both")
	}
	if o.policy != "" {
		p, err := wire.ParsePolicy(o.policy)
		if err != nil {
			return usageErrorf("--max-tool-policy: %v", err)
		}
		o.req.MaxToolPolicy = p
	}
	if o.duration != "" {
		d, err := parsePairingDuration(o.duration)
		if err != nil {
			return usageErrorf("--duration: %v", err)
		}
		// The host would cut a longer pairing to its limit without a word.
		if d < minPairingDuration || d > pairing.MaxGrantLifetime {
			return usageErrorf("--duration %s is out of range: a pairing lasts from 1 minute to 90 days (15m, 12h, 7d, 1mo…)", strings.TrimSpace(o.duration))
		}
		o.req.DurationSeconds = int64(d.Round(time.Second) / time.Second)
	}
	return nil
}

// saveQR writes the invite's QR code as a PNG where --qr-file says (with --qr alone: in
// the state directory) and returns its absolute path, "" when none is asked for.
func (o *pairingIssueOptions) saveQR(g *globals, inv *hostapi.Invite) (string, error) {
	qrFile := o.qrFile
	if o.qr && qrFile == "" {
		dir, err := g.stateDirPath()
		if err != nil {
			return "", err
		}
		qrFile = filepath.Join(dir, "invites", inv.ID+".png")
	}
	if qrFile == "" {
		return "", nil
	}
	qrFile, err := filepath.Abs(qrFile)
	if err != nil {
		return "", err
	}
	return qrFile, writeQRPNG(inv.Code, qrFile)
}

// print shows the invite for people.
func (o *pairingIssueOptions) print(out io.Writer, inv *hostapi.Invite, qrFile string) error {
	printf(out, "invite %s for %s, grant %s\n", inv.ID, appLabel(inv.AppID), inv.MaxToolPolicy)
	printf(out, "  use it by %s; the pairing it makes lasts until %s\n", until(inv.ExpiresAt), inv.GrantExpiresAt.Local().Format("2006-01-02 15:04"))
	if len(inv.HostAddresses) > 0 {
		printf(out, "  apps look for the host at %s\n", strings.Join(inv.HostAddresses, ", "))
	}
	fmt.Fprintf(out, "\n%s\n\n", inv.Code)
	if o.qr {
		if err := printQR(out, inv.Code, qrFile); err != nil {
			return err
		}
	} else if qrFile != "" {
		printf(out, "QR code image: %s\n", qrFile)
	}
	fmt.Fprintln(out, "Scan the QR code or paste the code into the app; it can be used once.")
	return nil
}

// aliasFlags makes the official CLI's flag names work as ours (not listed in --help; the
// command's help says so).
func aliasFlags(f *pflag.FlagSet, aliases map[string]string) {
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if ours, ok := aliases[name]; ok {
			name = ours
		}
		return pflag.NormalizedName(name)
	})
}

// minPairingDuration is the shortest pairing 'pairing issue' makes: a shorter one expires
// before anyone could use its invite. The longest is pairing.MaxGrantLifetime (90 days).
const minPairingDuration = time.Minute

// parsePairingDuration reads a duration as the official CLI takes it: Go's units plus d
// (day), w (week) and mo (month, 30 days), combined as in 1d12h.
func parsePairingDuration(s string) (time.Duration, error) {
	units := []struct {
		name string
		d    time.Duration
	}{{"mo", 30 * 24 * time.Hour}, {"ms", time.Millisecond}, {"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour},
		{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}}
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9') {
			i++
		}
		if i == 0 || i > 9 {
			return 0, fmt.Errorf("%q is not a duration like 15m, 12h, 7d or 1mo", s)
		}
		n, _ := strconv.Atoi(rest[:i])
		rest = rest[i:]
		found := false
		for _, u := range units {
			if strings.HasPrefix(rest, u.name) {
				total += time.Duration(n) * u.d
				rest, found = rest[len(u.name):], true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%q is not a duration like 15m, 12h, 7d or 1mo", s)
		}
		if total > 10*365*24*time.Hour {
			return 0, fmt.Errorf("%q is too long", s)
		}
	}
	if total <= 0 {
		return 0, fmt.Errorf("the duration must be positive")
	}
	return total, nil
}

// printQR prints the code's QR on the terminal when it fits, else says where its image is:
// a QR cut by the terminal's edge scans as nothing.
func printQR(w io.Writer, code, pngPath string) error {
	q, err := qrcode.New(code, qrcode.Low)
	if err != nil {
		return fmt.Errorf("qr code: %w", err)
	}
	art := strings.TrimRight(q.ToSmallString(false), "\n")
	lines := strings.Split(art, "\n")
	width := len([]rune(lines[0]))
	cols, rows := terminalSize(w)
	// The QR, with the invite's lines above and below it, must fit the screen.
	if width <= cols && len(lines)+6 <= rows {
		fmt.Fprintln(w, art)
		printf(w, "QR code image: %s\n", pngPath)
		return nil
	}
	printf(w, "The QR code needs %d×%d characters, more than this terminal's %d×%d: open its image instead:\n  %s\n",
		width, len(lines), cols, rows, pngPath)
	fmt.Fprintln(w, "(--qr-file FILE saves it where you want; a larger terminal window shows it here)")
	return nil
}

// appLabel names an invite's app for people.
func appLabel(appID string) string {
	if appID == "" {
		return "any app"
	}
	return appID
}

// until shows a deadline: its clock time, and how long is left.
func until(t time.Time) string {
	left := time.Until(t)
	when := t.Local().Format("15:04")
	if left > 20*time.Hour {
		when = t.Local().Format("2006-01-02 15:04")
	}
	if left <= 0 {
		return when + " (expired)"
	}
	return when + " (in " + roughly(left) + ")"
}

// roughly shows a duration to the minute: 45m, 3h20m, 12d.
func roughly(d time.Duration) string {
	d = d.Round(time.Minute)
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func newPairingListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the invites and the pairings (grants) the host holds, with their state",
		Long: `List issued invites and the grants the host holds: one per paired app installation,
made by an app's first local-mode connection or by a device using an invite. Each shows
its state: invites open, used, expired or revoked; pairings active, expired or revoked.
Revoked and expired entries stay listed until the host drops them (a week after an
invite expires, a month after a pairing does). Revoke either with
'ansight pairing revoke <id>'; 'ansight pairing get <id>' shows one.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runPairingList(c.Context(), g) },
	}
}

// runPairingList is 'ansight pairing list'.
func runPairingList(ctx context.Context, g *globals) error {
	b, err := g.backend()
	if err != nil {
		return err
	}
	inv, err := b.Invites(ctx)
	if err != nil {
		return hostErr(err)
	}
	if g.json {
		return writeJSON(g.env.Stdout, inv)
	}
	if len(inv.Invites) == 0 && len(inv.Grants) == 0 {
		fmt.Fprintln(g.env.Stdout, g.followUps("no invites or pairings; apps on this machine pair on their own, others with 'ansight pairing issue <app-id> --qr'"))
		return nil
	}
	if len(inv.Invites) > 0 {
		tw := newTable(g.env.Stdout).colourBy(2, policyColour).colourBy(3, stateColour)
		tw.header("INVITE", "APP", "GRANT", "STATE", "EXPIRES", "NAME")
		for _, i := range inv.Invites {
			tw.row(i.ID, appLabel(i.AppID), string(i.MaxToolPolicy), i.State, i.ExpiresAt.Local().Format("2006-01-02 15:04"), i.AppName)
		}
		tw.flush()
	}
	if len(inv.Grants) > 0 {
		if len(inv.Invites) > 0 {
			fmt.Fprintln(g.env.Stdout)
		}
		tw := newTable(g.env.Stdout).colourBy(4, policyColour).colourBy(5, stateColour)
		tw.header("PAIRING", "MODE", "APP", "DEVICE", "GRANT", "STATE", "EXPIRES", "LAST USED")
		for _, gr := range inv.Grants {
			tw.row(gr.ID, gr.Mode, gr.AppID, dash(gr.DeviceName), string(gr.MaxToolPolicy), gr.State,
				gr.ExpiresAt.Local().Format("2006-01-02 15:04"), ago(gr.LastUsedAt))
		}
		tw.flush()
	}
	return nil
}

func newPairingGetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get <invite-or-pairing-id>",
		Short: "Show one invite or pairing (never an invite's secret)",
		Args:  cobra.ExactArgs(1),
		RunE:  func(c *cobra.Command, args []string) error { return runPairingGet(c.Context(), g, args[0]) },
	}
}

// runPairingGet is 'ansight pairing get': an invite, else a pairing, with that id.
func runPairingGet(ctx context.Context, g *globals, id string) error {
	b, err := g.backend()
	if err != nil {
		return err
	}
	list, err := b.Invites(ctx)
	if err != nil {
		return hostErr(err)
	}
	for _, i := range list.Invites {
		if i.ID == id {
			return printInvite(g, i, list.Grants)
		}
	}
	for _, gr := range list.Grants {
		if gr.ID == id {
			return printGrant(g, gr)
		}
	}
	return fmt.Errorf("no invite or pairing %q (see 'ansight pairing list')", id)
}

// printInvite shows one invite and the pairings made with it.
func printInvite(g *globals, i hostapi.Invite, grants []hostapi.Grant) error {
	if g.json {
		i.Schema = hostapi.SchemaInvite
		return writeJSON(g.env.Stdout, i)
	}
	rows := [][2]string{{"invite", i.ID}, {"app", appLabel(i.AppID)}, {"name", i.AppName}, {"grant", string(i.MaxToolPolicy)},
		{"state", i.State}, {"issued", i.IssuedAt.Local().Format("2006-01-02 15:04")}, {"expires", until(i.ExpiresAt)},
		{"pairing lasts until", i.GrantExpiresAt.Local().Format("2006-01-02 15:04")}, {"uses", fmt.Sprintf("%d of %d", i.Uses, i.MaxUses)}}
	if !i.RevokedAt.IsZero() {
		rows = append(rows, [2]string{"revoked", i.RevokedAt.Local().Format("2006-01-02 15:04")})
	}
	for _, gr := range grants {
		if gr.InviteID == i.ID {
			rows = append(rows, [2]string{"pairing", gr.ID + " (" + gr.State + ", " + dash(gr.DeviceName) + ")"})
		}
	}
	printRows(newTable(g.env.Stdout), rows)
	return nil
}

// printGrant shows one pairing.
func printGrant(g *globals, gr hostapi.Grant) error {
	if g.json {
		gr.Schema = hostapi.SchemaGrant
		return writeJSON(g.env.Stdout, gr)
	}
	rows := [][2]string{{"pairing", gr.ID}, {"mode", gr.Mode}, {"invite", gr.InviteID}, {"app", gr.AppID},
		{"device", gr.DeviceName}, {"device id", gr.DeviceID}, {"grant", string(gr.MaxToolPolicy)}, {"state", gr.State},
		{"created", gr.CreatedAt.Local().Format("2006-01-02 15:04")}, {"expires", gr.ExpiresAt.Local().Format("2006-01-02 15:04")},
		{"last used", ago(gr.LastUsedAt)}}
	if !gr.RevokedAt.IsZero() {
		rows = append(rows, [2]string{"revoked", gr.RevokedAt.Local().Format("2006-01-02 15:04")})
	}
	printRows(newTable(g.env.Stdout), rows)
	return nil
}

// printRows writes "key: value" rows, leaving out empty values.
func printRows(tw *table, rows [][2]string) {
	for _, kv := range rows {
		if kv[1] != "" {
			tw.row(kv[0]+":", kv[1])
		}
	}
	tw.flush()
}

func newPairingRevokeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke <invite-or-pairing-id>",
		Short: "Revoke an invite (and the pairings made with it) or one pairing",
		Long: `Revoke an invite or a pairing (grant), by the id 'ansight pairing list' shows. Revoking an
invite also revokes every pairing made with it. The live sessions of a revoked pairing end
at once, and tokens it was issued and has not used stop working. Both stay listed, as
revoked.

What the device sees afterwards:
  - a local pairing (an app on this machine or an emulator): that app on that device (its
    app id and device id) is refused (RegistrationRevoked), whatever token it presents,
    until you forget the pairing ('ansight pairing forget <id>') or the host drops it, 30
    days after its expiry (120 days after it was made). Its next enrollment after that is
    trusted on first use, as a new local pairing.
  - an invite pairing: the device is refused with the secret it stored; a new invite pairs
    it again.

A pairing made by an older host may have an id that starts with '-': put it after '--'
(ansight pairing revoke -- -zfR_icLhB0DPQf3vuwN6Q).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runPairingRevoke(c.Context(), g, args) },
	}
}

// runPairingRevoke is 'ansight pairing revoke'.
func runPairingRevoke(ctx context.Context, g *globals, args []string) error {
	r, err := ask(g, ctx, hostapi.Backend.Revoke, args[0])
	if err != nil {
		return err
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
}

func newPairingForgetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "forget <pairing-id>",
		Short: "Remove a revoked or expired pairing, so that its app may pair again",
		Long: `Remove a revoked (or expired) pairing from the host, by the id 'ansight pairing list' shows.
A revoked local pairing keeps refusing its app on that device; once forgotten, the app's
next enrollment is trusted on first use and makes a new local pairing (with a new id). A
device paired by an invite needs a new invite. An active pairing is not forgotten: revoke
it first.`,
		Example: `  ansight pairing revoke 3kJ9mQ2xV7pL1nR8tY4wZg
  ansight pairing forget 3kJ9mQ2xV7pL1nR8tY4wZg`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runPairingForget(c.Context(), g, args) },
	}
}

// runPairingForget is 'ansight pairing forget'.
func runPairingForget(ctx context.Context, g *globals, args []string) error {
	r, err := ask(g, ctx, hostapi.Backend.Forget, args[0])
	if err != nil {
		return err
	}
	if g.json {
		return writeJSON(g.env.Stdout, r)
	}
	printf(g.env.Stdout, "forgot %s pairing %s of %s on %s: it may pair again\n", r.Mode, r.ID, r.AppID, r.DeviceID)
	return nil
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

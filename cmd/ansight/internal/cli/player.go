package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
)

func newPlayerCmd(g *globals) *cobra.Command {
	var archiveAddr string
	var archiveOpen bool
	cmd := &cobra.Command{
		Use:   "player",
		Short: "Open the web player of the running host, or print its address; or show an archive in it",
		Long: `The web player is served by 'ansight host run' and 'ansight demo --keep-running' on this
machine, behind an access token that only you can get: these commands ask the host for it
through its control socket. The token survives restarts of the host, so open pages
reconnect by themselves; --new-token replaces it and locks every open page out.

'ansight player --archive FILE.zip' needs no host: it serves a player of its own over the
archive (ours, the official host's or an SDK's offline capture, unpacked into a private
temporary store, never imported), prints its address with a fresh access token, and
serves it until Ctrl-C. The recording's Timeline, Traffic, and the session's crash reports
and annotations are there; everything that needs a live app (tools, Files, Data, the live
screen) says that no host is running.`,
		Example: "  ansight player open\n  ansight player --archive bug-report.zip\n  ansight player --archive capture.zip --password-env CAPTURE_PASSWORD --open",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if g.recordings.archive == "" {
				return c.Help()
			}
			return runPlayerArchive(c.Context(), g, archiveAddr, archiveOpen)
		},
	}
	g.addRecordingsFlags(cmd)
	cmd.Flags().StringVar(&archiveAddr, "addr", "127.0.0.1:0", "with --archive: loopback address to serve the player on (default: any free port)")
	cmd.Flags().BoolVar(&archiveOpen, "open", false, "with --archive: open the player in the default browser too")
	var renew bool
	url := &cobra.Command{
		Use:     "url",
		Short:   "Print the player's address with its access token",
		Example: "  ansight player url\n  ansight player url --new-token",
		Args:    cobra.NoArgs,
		RunE:    func(c *cobra.Command, _ []string) error { return runPlayerURL(c.Context(), g, renew) },
	}
	url.Flags().BoolVar(&renew, "new-token", false, "replace the access token first (every open page is locked out)")
	open := &cobra.Command{
		Use:   "open",
		Short: "Open the player in the default browser ($BROWSER, else xdg-open or open); exit 1 if it could not",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runPlayerOpen(c.Context(), g) },
	}
	cmd.AddCommand(url, open)
	return cmd
}

// runPlayerURL is 'ansight player url': renew replaces the token first (--new-token).
func runPlayerURL(ctx context.Context, g *globals, renew bool) error {
	a, err := ask(g, ctx, hostapi.Backend.Player, renew)
	if err != nil {
		return err
	}
	if g.json {
		return writeJSON(g.env.Stdout, a)
	}
	fmt.Fprintln(g.env.Stdout, a.URL)
	if renew {
		fmt.Fprintln(g.env.Stderr, "a new access token: pages opened with the old one are locked out")
	}
	return nil
}

// runPlayerOpen is 'ansight player open'.
func runPlayerOpen(ctx context.Context, g *globals) error {
	a, err := ask(g, ctx, hostapi.Backend.Player, false)
	if err != nil {
		return err
	}
	if err := openBrowser(ctx, a.URL); err != nil {
		if g.json {
			return fmt.Errorf("could not open a browser (%v): 'ansight player url' prints the address to open", err)
		}
		fmt.Fprintln(g.env.Stdout, a.URL)
		return fmt.Errorf("could not open a browser (%v): open the address above yourself ('ansight player url' prints it again)", err)
	}
	printf(g.env.Stdout, "opened %s in the browser\n", a.Address)
	return nil
}

// runPlayerArchive is 'ansight player --archive': a player of its own over the archive,
// on a loopback address, until ctx ends (Ctrl-C: exit 0). The access token is new each run
// and lives only in this process: only the URL printed here opens the page.
func runPlayerArchive(ctx context.Context, g *globals, addr string, open bool) error {
	l, err := player.Listen(addr) // before the archive is unpacked, which may take a while
	if err != nil {
		return usageErrorf("--addr: %v", err)
	}
	b, id, err := g.recordingsOf(ctx, nil)
	if err != nil {
		l.Close()
		return err
	}
	p, err := player.New(hostapi.WithOrigin(b, hostapi.OriginPlayer), player.Options{Version: g.env.Version})
	if err != nil {
		l.Close()
		return err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		p.Close() // ends the live streams, which Shutdown would wait for
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(sctx)
		cancel()
	}()
	// The page opens on the recording's timeline (the fragment survives the token's redirect).
	access := &hostapi.PlayerAccess{Schema: hostapi.SchemaPlayer, Address: l.Addr().String(),
		URL: p.URL(l.Addr().String()) + "#/s/" + url.PathEscape(id) + "/timeline"}
	if g.json {
		writeJSON(g.env.Stdout, access)
	} else {
		fmt.Fprintln(g.env.Stdout, access.URL)
		printf(g.env.Stderr, "ansight: serving the archive %s in the player at %s until Ctrl-C\n", g.recordings.archive, access.Address)
	}
	if open {
		if err := openBrowser(ctx, access.URL); err != nil {
			printf(g.env.Stderr, "ansight: could not open a browser (%v): open the address above yourself\n", err)
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return fmt.Errorf("player: %w", err)
	}
}

// openerWait is how long openBrowser waits for the opener's exit status. Openers such as
// xdg-open and open exit once the browser has the URL, with a failure status when none
// could take it; an opener still running after this is a browser itself ($BROWSER=firefox),
// which has the page.
const openerWait = 2 * time.Second

// openBrowser opens url with the system's opener, and fails when the opener is missing or
// exits with a failure status. $BROWSER wins, as with other tools.
func openBrowser(ctx context.Context, url string) error {
	var name string
	switch {
	case os.Getenv("BROWSER") != "":
		name = os.Getenv("BROWSER")
	case runtime.GOOS == "darwin":
		name = "open"
	default:
		name = "xdg-open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("no %s", name)
		}
		return err
	}
	// The URL goes as an argument, never through a shell.
	cmd := exec.Command(path, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t := time.NewTimer(openerWait)
	defer t.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

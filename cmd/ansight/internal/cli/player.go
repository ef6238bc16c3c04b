package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
)

func newPlayerCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "player",
		Short: "Open the web player of the running host, or print its address",
		Long: `The web player is served by 'ansight host run' and 'ansight demo --keep-running' on this
machine, behind an access token that only you can get: these commands ask the host for it
through its control socket. The token survives restarts of the host, so open pages
reconnect by themselves; --new-token replaces it and locks every open page out.`,
	}
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

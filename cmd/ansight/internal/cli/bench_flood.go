package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/ansight-go/ansight/cmd/ansight/internal/reliability"
)

// runEnrollFlood runs the enrollment flood; an app left without an answer, a wrong answer
// or a flooder answered beyond its budget is an error.
func runEnrollFlood(ctx context.Context, g *globals, f benchFlags) error {
	if f.session != "" || f.load {
		return usageErrorf("--enroll-flood runs its own host and apps; it cannot be combined with --session or --load")
	}
	if f.enrollFlood < 1 || f.enrollFlood > 100000 {
		return usageErrorf("--enroll-flood must be 1..100000, not %d", f.enrollFlood)
	}
	opts := reliability.FloodOptions{Apps: f.enrollFlood}
	switch {
	case f.flooder == 0:
		opts.Flooder = -1 // none
	case f.flooder > 0:
		opts.Flooder = f.flooder
	}
	opts.Progress = stressProgress(g)
	rep, err := benchFlood(ctx, opts)
	if err != nil {
		return err
	}
	return writeStressReport(g, rep)
}

// stressProgress tells the phases of --load and --enroll-flood on stderr (nothing with
// --json).
func stressProgress(g *globals) func(string) {
	if g.json {
		return nil
	}
	return func(p string) { fmt.Fprintf(g.env.Stderr, "%s...\n", p) }
}

// writeStressReport prints the report of --load or --enroll-flood, as JSON or for people,
// and returns what the run fell short of.
func writeStressReport(g *globals, rep interface {
	WriteText(io.Writer) error
	Check() error
}) error {
	var err error
	if g.json {
		err = writeJSON(g.env.Stdout, rep)
	} else {
		err = writeReport(g.env.Stdout, rep.WriteText)
	}
	if err != nil {
		return err
	}
	return rep.Check()
}

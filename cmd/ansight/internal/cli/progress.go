package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ansight-go/ansight/hostapi"
)

// progressBar draws artifact transfers on stderr when it is a terminal; otherwise it does
// nothing, so scripts and --json output stay clean.
type progressBar struct {
	w    io.Writer
	mu   sync.Mutex
	last time.Time
	drew bool
}

func (g *globals) progress() *progressBar {
	if g.json || !isTerminal(g.env.Stderr) {
		return &progressBar{}
	}
	return &progressBar{w: g.env.Stderr}
}

func (p *progressBar) update(pr hostapi.Progress) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !pr.Done && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	frac := 1.0
	if pr.SizeBytes > 0 {
		frac = float64(pr.ReceivedBytes) / float64(pr.SizeBytes)
	}
	n := int(frac * width)
	if n > width {
		n = width
	}
	fmt.Fprintf(p.w, "\r%-24s [%s%s] %3.0f%% %s", oneLine(termText(pr.FileName), 24), strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, humanBytes(pr.ReceivedBytes))
	p.drew = true
}

func (p *progressBar) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drew {
		fmt.Fprint(p.w, "\n")
	}
}

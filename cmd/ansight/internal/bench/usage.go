package bench

import "github.com/ansight-go/ansight/cmd/ansight/internal/usage"

// On a machine that other work shares, wall-clock figures measure that work as much as the
// protocol: a call waits while another process runs. CPU time does not, or much less, so
// the call figures the targets judge are CPU per call (this process's user and system
// time from getrusage, both ends of the connection being in this process) next to the
// echo's, and the report says how busy the rest of the machine was meanwhile (package
// usage).

// span is what happened between two samples of usage.Now.
type span = usage.Span

func sampleUsage() usage.Sample { return usage.Now() }

func until(start, end usage.Sample) span { return start.Until(end, 0) }

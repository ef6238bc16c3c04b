package bench

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Schema names the Report's JSON shape; it changes name when the shape changes incompatibly.
const Schema = "ansight.bench/v1"

// Units of Figure values.
const (
	UnitMicros = "µs"
	// UnitCPUMicros is CPU time (user + system, getrusage) per operation.
	UnitCPUMicros   = "cpu-µs"
	UnitCallsPerSec = "calls/s"
	UnitMBPerSec    = "MB/s"
	UnitBytes       = "bytes"
	// UnitAllocs is heap allocations per operation.
	UnitAllocs = "allocations"
)

// Report is the outcome of a run: every figure beside its baseline, and what was skipped.
type Report struct {
	Schema string `json:"schema"`
	// Subject says what was measured: the in-process demo app, or a resident host's session.
	Subject string  `json:"subject"`
	Machine Machine `json:"machine"`
	// Load is what the rest of the machine did during the run; nil where unknown.
	Load    *Load    `json:"load,omitzero"`
	Options Options  `json:"options"`
	Figures []Figure `json:"figures"`
	// Skipped lists the measurements that did not apply, with the reason.
	Skipped   []Skip    `json:"skipped,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// DurationMS is the run's wall-clock time.
	DurationMS int64 `json:"durationMs"`
}

// Machine describes where the run happened: ratios are comparable across machines,
// absolute figures are not.
type Machine struct {
	GoVersion  string `json:"goVersion"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func thisMachine() Machine {
	return Machine{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
}

// Load says how busy other processes kept the machine during a run. Wall-clock figures
// (latencies, throughput) are slowed by it; CPU figures much less, which is why the call
// targets are on CPU per call.
type Load struct {
	// OtherCPUs is the average number of CPUs that other processes kept busy: the
	// machine's busy time (/proc/stat) less this process's CPU time, over the run.
	OtherCPUs float64 `json:"otherCpus"`
	// LoadAverage is the machine's 1-minute load average at the end of the run.
	LoadAverage float64 `json:"loadAverage"`
}

// busyLoad is the share of the machine's CPUs other processes must keep busy for the
// report to warn that wall-clock figures reflect them.
const busyLoad = 0.25

func machineLoad(s span) *Load {
	if s.Others < 0 {
		return nil
	}
	return &Load{OtherCPUs: s.Others, LoadAverage: s.Load1}
}

// Figure is one measured value beside its baseline. Ratio is always Value / BaselineValue;
// the Target says in which direction it should lie.
type Figure struct {
	// Group is the measurement the figure belongs to: calls, batch, catalog, payload,
	// artifact.
	Group string `json:"group"`
	// Name says what was measured, e.g. "call throughput, 8 callers".
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Baseline names what the figure is compared with; BaselineValue is in the same unit.
	Baseline      string  `json:"baseline"`
	BaselineValue float64 `json:"baselineValue"`
	Ratio         float64 `json:"ratio"`
	// RatioRange is the lowest and the highest ratio of single rounds, where the figure
	// alternated with its baseline round by round: the spread of Ratio.
	RatioRange *[2]float64 `json:"ratioRange,omitzero"`
	// Target and Met are set for the figures the project commits to.
	Target *Target `json:"target,omitzero"`
	Met    *bool   `json:"met,omitzero"`
	// Note adds context: sizes, counts, what the ratio means.
	Note string `json:"note,omitzero"`
}

// Target is a bound on a Figure's ratio.
type Target struct {
	// Op is ">=" (at least Ratio) or "<=" (at most Ratio).
	Op    string  `json:"op"`
	Ratio float64 `json:"ratio"`
}

// Target operators.
const (
	AtLeast = ">="
	AtMost  = "<="
)

// String renders the target, with the factor for small upper bounds ("<= 0.02 (50x)").
func (t Target) String() string {
	s := t.Op + " " + formatRatio(t.Ratio)
	if t.Op == AtMost && t.Ratio > 0 && t.Ratio < 0.5 {
		s += fmt.Sprintf(" (%.0fx cheaper)", 1/t.Ratio)
	}
	return s
}

func (t Target) met(ratio float64) bool {
	if t.Op == AtMost {
		return ratio <= t.Ratio
	}
	return ratio >= t.Ratio
}

// Skip is a measurement that did not run.
type Skip struct {
	Measurement string `json:"measurement"`
	Reason      string `json:"reason"`
}

// TargetsMet reports whether every figure with a target met it.
func (r *Report) TargetsMet() bool {
	for _, f := range r.Figures {
		if f.Met != nil && !*f.Met {
			return false
		}
	}
	return true
}

// add appends a figure, computing its ratio and verdict.
func (r *Report) add(f Figure) {
	if f.BaselineValue != 0 {
		f.Ratio = f.Value / f.BaselineValue
	}
	if f.Target != nil {
		met := f.BaselineValue != 0 && f.Target.met(f.Ratio)
		f.Met = &met
	}
	r.Figures = append(r.Figures, f)
}

func (r *Report) skip(measurement, format string, args ...any) {
	r.Skipped = append(r.Skipped, Skip{Measurement: measurement, Reason: fmt.Sprintf(format, args...)})
}

// WriteTable writes the report as a readable table: figure, value, baseline, ratio, target
// and whether it was met, then the notes and the skipped measurements.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ansight bench: %s\n", r.Subject)
	fmt.Fprintf(&b, "%s %s/%s, %d CPUs, GOMAXPROCS %d; %s\n", r.Machine.GoVersion, r.Machine.OS, r.Machine.Arch,
		r.Machine.CPUs, r.Machine.GOMAXPROCS, (time.Duration(r.DurationMS) * time.Millisecond).String())
	switch l := r.Load; {
	case l == nil:
		b.WriteString("load of other processes: unknown on this system\n")
	case l.OtherCPUs >= busyLoad*float64(r.Machine.CPUs):
		fmt.Fprintf(&b, "busy machine: other processes kept %.1f of %d CPUs busy on average (load average %.1f); "+
			"wall-clock figures (latency, throughput) are slowed by them, CPU per call much less\n", l.OtherCPUs, r.Machine.CPUs, l.LoadAverage)
	default:
		fmt.Fprintf(&b, "other processes kept %.2f of %d CPUs busy on average (load average %.1f)\n", l.OtherCPUs, r.Machine.CPUs, l.LoadAverage)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tVALUE\tBASELINE\tBASELINE VALUE\tRATIO\tTARGET\tMET")
	for _, f := range r.Figures {
		target, met := "", ""
		if f.Target != nil {
			target = f.Target.String()
			met = "no"
			if f.Met != nil && *f.Met {
				met = "yes"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, formatValue(f.Value, f.Unit), f.Baseline,
			formatValue(f.BaselineValue, f.Unit), f.ratioText(), target, met)
	}
	tw.Flush()
	notes := false
	for _, f := range r.Figures {
		if f.Note == "" {
			continue
		}
		if !notes {
			b.WriteString("\nNotes:\n")
			notes = true
		}
		fmt.Fprintf(&b, "  %s: %s\n", f.Name, f.Note)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\nSkipped:\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "  %s: %s\n", s.Measurement, s.Reason)
		}
	}
	withTarget, met := 0, 0
	for _, f := range r.Figures {
		if f.Met != nil {
			withTarget++
			if *f.Met {
				met++
			}
		}
	}
	fmt.Fprintf(&b, "\nTargets met: %d of %d\n", met, withTarget)
	_, err := io.WriteString(w, b.String())
	return err
}

// ratioText is the ratio with its spread over the rounds, "1.183 [1.15–1.21]".
func (f *Figure) ratioText() string {
	if f.RatioRange == nil {
		return formatRatio(f.Ratio)
	}
	return fmt.Sprintf("%s [%s–%s]", formatRatio(f.Ratio), formatRatio(f.RatioRange[0]), formatRatio(f.RatioRange[1]))
}

func formatRatio(r float64) string {
	switch {
	case r == 0:
		return "-"
	case r < 0.01:
		return fmt.Sprintf("%.4f", r)
	case r < 10:
		return fmt.Sprintf("%.3f", r)
	default:
		return fmt.Sprintf("%.1f", r)
	}
}

func formatValue(v float64, unit string) string {
	switch unit {
	case UnitBytes:
		switch {
		case v >= 1<<20:
			return fmt.Sprintf("%.2f MiB", v/(1<<20))
		case v >= 1<<10:
			return fmt.Sprintf("%.1f KiB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	case UnitMicros, UnitCPUMicros:
		what := ""
		if unit == UnitCPUMicros {
			what = " CPU"
		}
		if v >= 10000 {
			return fmt.Sprintf("%.1f ms%s", v/1000, what)
		}
		return fmt.Sprintf("%.1f µs%s", v, what)
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

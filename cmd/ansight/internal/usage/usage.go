package usage

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

// Sample is the CPU time used so far by this process and by the whole machine.
type Sample struct {
	Wall    time.Time
	Process time.Duration // user + system time of this process (getrusage)
	// Machine is the busy time of all CPUs since boot; valid when MachineKnown.
	Machine      time.Duration
	MachineKnown bool
}

// Now samples the process's and the machine's CPU time.
func Now() Sample {
	s := Sample{Wall: time.Now(), Process: ProcessCPU()}
	s.Machine, s.MachineKnown = machineBusy()
	return s
}

// Span is what happened between two samples.
type Span struct {
	Wall    Millis `json:"wallMs"`
	Process Millis `json:"processMs"`
	// Others is the average number of CPUs kept busy by everything but this process (and
	// Children), -1 when unknown.
	Others float64 `json:"others"`
	// Load1 is the 1-minute load average at the end, -1 when unknown.
	Load1 float64 `json:"load1"`
	// CPUs is the number of CPUs the machine has.
	CPUs int `json:"cpus"`
}

// Since returns the span from s to now. children is the CPU time that processes this one
// waits for (a child fleet) used during the span: it is not counted in Others.
func (s Sample) Since(children time.Duration) Span { return s.Until(Now(), children) }

// Until returns the span from s to end (see Since).
func (s Sample) Until(end Sample, children time.Duration) Span {
	wall, process := end.Wall.Sub(s.Wall), end.Process-s.Process
	sp := Span{Wall: Millis(wall), Process: Millis(process), Others: -1, Load1: LoadAverage(), CPUs: runtime.NumCPU()}
	if s.MachineKnown && end.MachineKnown && wall > 0 {
		// The machine's counters tick at 100 Hz, the process's are exact: over a short span
		// the difference may come out slightly negative.
		sp.Others = max(0, float64(end.Machine-s.Machine-process-children)/float64(wall))
	}
	return sp
}

// PerOp is the process's CPU time per operation, in µs.
func (sp Span) PerOp(n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(sp.Process) / float64(time.Microsecond) / float64(n)
}

// Cores is the process's CPU time over the wall time: the CPUs it kept busy on average.
func (sp Span) Cores() float64 {
	if sp.Wall <= 0 {
		return 0
	}
	return float64(sp.Process) / float64(sp.Wall)
}

// Conditions describes the machine during the span, for a report: "2 CPUs, other work
// kept 1.4 busy, load average 7.9".
func (sp Span) Conditions() string {
	s := fmt.Sprintf("%d CPUs", sp.CPUs)
	if sp.Others >= 0 {
		s += fmt.Sprintf(", other work kept %.1f busy", sp.Others)
	}
	if sp.Load1 >= 0 {
		s += fmt.Sprintf(", load average %.1f", sp.Load1)
	}
	return s
}

// clockTick is the unit of /proc/stat (USER_HZ: 100 on every Linux architecture).
const clockTick = 10 * time.Millisecond

// machineBusy returns the time all CPUs spent on anything but idling and waiting for I/O
// since boot, from the first line of /proc/stat.
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
	// counted in user and nice already.
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, false
	}
	var busy int64
	for i, field := range f[1:9] {
		n, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return 0, false
		}
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return time.Duration(busy) * clockTick, true
}

// LoadAverage returns the machine's 1-minute load average, -1 when unknown.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return -1
	}
	l, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return -1
	}
	return l
}

package bench

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// On a machine that other work shares, wall-clock figures measure that work as much as the
// protocol: a call waits while another process runs. CPU time does not, or much less, so
// the call figures the targets judge are CPU per call (this process's user and system
// time from getrusage, both ends of the connection being in this process) next to the
// echo's, and the report says how busy the rest of the machine was meanwhile.

// usage is a sample of the CPU time used so far by this process and by the whole machine.
type usage struct {
	wall    time.Time
	process time.Duration // user + system time of this process
	machine time.Duration // busy time of all CPUs; 0 when machineKnown is false
	// machineKnown: the machine's counters could be read (/proc/stat, Linux).
	machineKnown bool
}

func sampleUsage() usage {
	u := usage{wall: time.Now(), process: processCPU()}
	u.machine, u.machineKnown = machineBusy()
	return u
}

// span is what happened between two samples.
type span struct {
	wall    time.Duration
	process time.Duration
	// others is the average number of CPUs other processes kept busy, -1 when unknown.
	others float64
}

func (u usage) until(end usage) span {
	s := span{wall: end.wall.Sub(u.wall), process: end.process - u.process, others: -1}
	if u.machineKnown && end.machineKnown && s.wall > 0 {
		// The machine's counters tick at 100 Hz and this process's are exact: over a short
		// span the difference can come out slightly negative.
		s.others = max(0, float64(end.machine-u.machine-s.process)/float64(s.wall))
	}
	return s
}

// perOp returns the process's CPU time per operation in µs.
func (s span) perOp(n int) float64 {
	if n <= 0 {
		return 0
	}
	return micros(s.process) / float64(n)
}

// clockTick is the unit of /proc/stat (USER_HZ, 100 on every Linux architecture Go
// supports).
const clockTick = 10 * time.Millisecond

// machineBusy returns the time all CPUs spent on anything but idling and waiting for I/O
// since boot, from the first line of /proc/stat.
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	fields := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is
	// already counted in user and nice.
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return 0, false
	}
	var busy int64
	for i, f := range fields[1:9] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, false
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return time.Duration(busy) * clockTick, true
}

// loadAverage returns the machine's 1-minute load average, -1 when unknown.
func loadAverage() float64 {
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

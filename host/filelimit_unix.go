//go:build linux || darwin

package host

import "syscall"

// raiseFileLimit raises the soft open-file limit to the hard one (the Go runtime does so
// at start on most systems; a process that lowered it since gets it back) and, when even
// the hard one is below need, tries to raise both to need, which only a privileged process
// may. It returns the limit in force.
func raiseFileLimit(need uint64) FileLimit {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return FileLimit{}
	}
	raised := false
	set := func(soft, hard uint64) {
		want := syscall.Rlimit{Cur: soft, Max: hard}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			raised = raised || soft > rl.Cur
			rl = want
		}
	}
	if rl.Cur < rl.Max {
		set(rl.Max, rl.Max)
		if rl.Cur < need && rl.Cur < rl.Max { // macOS refuses an unlimited soft limit
			set(min(need, rl.Max), rl.Max)
		}
	}
	if rl.Cur < need && rl.Max < need {
		set(need, need)
	}
	return FileLimit{Soft: rl.Cur, Hard: rl.Max, Raised: raised}
}

package flow

import (
	"context"
	"sync"
	"time"
)

// Job is one flow to run against one session.
type Job struct {
	Flow   *Flow
	Target Target
	// SessionID, AppID and Host name the session in the result (Options' fields).
	SessionID, AppID, Host string
}

// RunAll runs jobs and reports them in their order: the jobs of one session one after
// another (flows share an app's state), different sessions in parallel, at most parallel
// at once (all when 0). opts applies to every job; its Progress is called from one
// goroutine at a time.
func RunAll(ctx context.Context, jobs []Job, opts Options, parallel int) *Report {
	rep := &Report{Schema: RunSchema, StartedAt: time.Now(), Results: make([]*Result, len(jobs))}
	bySession := map[string][]int{}
	var order []string
	for i, j := range jobs {
		key := j.Host + "\x00" + j.SessionID
		if _, ok := bySession[key]; !ok {
			order = append(order, key)
		}
		bySession[key] = append(bySession[key], i)
	}
	if parallel <= 0 {
		parallel = len(order)
	}
	var mu sync.Mutex
	if p := opts.Progress; p != nil {
		opts.Progress = func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			p(e)
		}
	}
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for _, key := range order {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, i := range bySession[key] {
				j := jobs[i]
				o := opts
				o.SessionID, o.AppID, o.Host = j.SessionID, j.AppID, j.Host
				rep.Results[i] = Run(ctx, j.Flow, j.Target, o)
			}
		})
	}
	wg.Wait()
	rep.DurationMS = time.Since(rep.StartedAt).Milliseconds()
	rep.Tally()
	return rep
}

package tools

import "context"

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns a context that makes a Call or Batch report the progress of the
// transfers its response announces to f, as well as to Options.OnTransfer: a caller sees
// its own transfers' progress, not those of other calls running at the same time. f runs
// on the host's reading goroutine and must return quickly.
func WithProgress(ctx context.Context, f func(TransferProgress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// progressOf returns the function WithProgress put in ctx, or nil (also for no ctx).
func progressOf(ctx context.Context) func(TransferProgress) {
	if ctx == nil {
		return nil
	}
	f, _ := ctx.Value(progressKey{}).(func(TransferProgress))
	return f
}

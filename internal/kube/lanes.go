package kube

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// A Cluster's own report (its status, its pending-hooks annotation) is one small write at the
// end of a pass, read by users and by the next pass; the applies of a hundred Clusters created
// at once fill the client-side rate limit for seconds. Queued behind them, the report overflows
// the step budget it runs in inside the workflow task and runs again as an activity of its own
// (bench, 100 Clusters: 1.8 such repeats per Cluster, seven history events each). So reports go
// to the head of the queue: they take their token from the same bucket, up to reportJump ahead
// of the requests waiting, which wait that much longer. The client's rate stays what
// --kube-api-qps says, on average; only the order changes.

// reportJump is how far ahead of the queue a report may take its token: longer than the queue a
// fleet create makes (100 Clusters' applies at 100 requests/s: about 15 s).
const reportJump = 20 * time.Second

// reportLane marks a context whose requests go to the head of the queue.
type reportLane struct{}

// Report marks ctx's requests as a Cluster's report (see reportJump).
func Report(ctx context.Context) context.Context {
	return context.WithValue(ctx, reportLane{}, true)
}

func isReport(ctx context.Context) bool {
	v, _ := ctx.Value(reportLane{}).(bool)
	return v
}

// laneLimiter is a client's token bucket (a flowcontrol.RateLimiter) that lets reports jump the
// queue.
type laneLimiter struct {
	bucket *rate.Limiter
}

func newLaneLimiter(qps float32, burst int) *laneLimiter {
	return &laneLimiter{bucket: rate.NewLimiter(rate.Limit(qps), burst)}
}

// Wait takes a token: a report's at once unless the queue is more than reportJump long, any
// other's in turn (the rest client passes the request's context).
func (l *laneLimiter) Wait(ctx context.Context) error {
	if !isReport(ctx) {
		return l.bucket.Wait(ctx)
	}
	r := l.bucket.Reserve()
	wait := r.Delay() - reportJump
	if wait <= 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		r.Cancel()
		return fmt.Errorf("a report would wait %s for its token, past its deadline", wait.Round(time.Millisecond))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	}
}

// Accept takes a token in turn.
func (l *laneLimiter) Accept() { _ = l.bucket.Wait(context.Background()) }

// TryAccept takes a token if one is there now.
func (l *laneLimiter) TryAccept() bool { return l.bucket.Allow() }

// QPS is the bucket's rate.
func (l *laneLimiter) QPS() float32 { return float32(l.bucket.Limit()) }

// Stop has nothing to stop: the bucket runs no goroutine.
func (l *laneLimiter) Stop() {}

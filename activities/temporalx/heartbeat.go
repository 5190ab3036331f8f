package temporalx

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
)

// HeartbeatEvery is how often a running activity heartbeats. Workflows set a heartbeat timeout a
// few times longer: a worker that dies mid-activity is noticed then, and the activity retried on
// another worker, instead of after the whole start-to-close timeout.
const HeartbeatEvery = 5 * time.Second

// Heartbeats is a worker interceptor that makes every activity heartbeat while it runs. The
// activities stay unaware of it.
func Heartbeats() interceptor.WorkerInterceptor { return &heartbeats{} }

type heartbeats struct {
	interceptor.WorkerInterceptorBase
}

func (*heartbeats) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &heartbeatingActivity{}
	i.Next = next
	return i
}

type heartbeatingActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *heartbeatingActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if activity.GetInfo(ctx).IsLocalActivity {
		// A local activity runs inside a workflow task, which the SDK keeps alive.
		return a.Next.ExecuteActivity(ctx, in)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return a.Next.ExecuteActivity(ctx, in)
}

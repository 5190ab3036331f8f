package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/topoflow/topoflow/internal/kube"
)

// leaderElection configures the starter's leader election: of several starters (replicas for
// availability) only the one holding the Lease watches and signals, so signals are not doubled
// and the registry workflows are not started twice.
type leaderElection struct {
	enabled             bool
	namespace, name     string
	lease, renew, retry time.Duration
}

// errLostLease ends a term as leader that lost its Lease (it could not renew it, for example
// while the API server was away longer than the renew deadline).
var errLostLease = errors.New("lost the leader election Lease")

// campaign runs terms as leader until ctx ends: after a lost Lease (its watcher has stopped by
// then, so two leaders never overlap) the starter stands for election again instead of exiting,
// so it recovers from an API server outage without a supervisor (the local stack has none).
func (le leaderElection) campaign(ctx context.Context, kc *kube.Client, log *slog.Logger, lead func(context.Context) error) error {
	for {
		err := le.run(ctx, kc, log, lead)
		if !errors.Is(err, errLostLease) || ctx.Err() != nil {
			return err
		}
		log.Warn("lost the leader election Lease; standing for election again", "lease", le.namespace+"/"+le.name)
	}
}

// run calls lead with a context that lives while this process holds the Lease; it returns when
// ctx ends, or with errLostLease when the Lease was lost.
func (le leaderElection) run(ctx context.Context, kc *kube.Client, log *slog.Logger, lead func(context.Context) error) error {
	if !le.enabled {
		return lead(ctx)
	}
	cs, err := kubernetes.NewForConfig(kc.Config)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	id := host + "_" + rand.String(8)
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, le.namespace, le.name, cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	// The callbacks run on the elector's goroutines; these are read after Run returns and the
	// leading goroutine (if any) has ended.
	var (
		mu      sync.Mutex
		leadErr error
		lost    bool
		led     = make(chan struct{})
		leading bool
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: le.lease, RenewDeadline: le.renew, RetryPeriod: le.retry,
		ReleaseOnCancel: true, Name: le.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				mu.Lock()
				leading = true
				mu.Unlock()
				defer close(led)
				log.Info("leading: watching and signalling", "lease", le.namespace+"/"+le.name, "identity", id)
				err := lead(leadCtx)
				mu.Lock()
				leadErr = err
				mu.Unlock()
				cancel() // lead returned (an error, or the Lease is going): stop electing
			},
			OnStoppedLeading: func() {
				mu.Lock()
				defer mu.Unlock()
				if ctx.Err() == nil {
					lost = true
				}
				cancel()
			},
			OnNewLeader: func(current string) {
				if current != id {
					log.Info("following", "leader", current, "lease", le.namespace+"/"+le.name)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	log.Info("waiting for the leader election Lease", "lease", le.namespace+"/"+le.name, "identity", id)
	elector.Run(ctx)
	mu.Lock()
	wasLeading := leading
	mu.Unlock()
	if wasLeading {
		<-led // the watcher has stopped: no second leader's signals overlap with ours
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case leadErr != nil:
		return leadErr
	case lost:
		return errLostLease
	}
	return nil
}

package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// waitWithin takes a token for ctx's lane, giving up after d.
func waitWithin(l *laneLimiter, ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return l.Wait(ctx)
}

func TestLaneLimiter(t *testing.T) {
	l := newLaneLimiter(0.1, 5) // one per 10 s, burst 5: reports may take up to 2 tokens ahead (reportJump)
	defer l.Stop()
	for i := range 5 {
		if !l.TryAccept() {
			t.Fatalf("token %d of a burst of 5 refused", i+1)
		}
	}
	if err := waitWithin(l, context.Background(), 100*time.Millisecond); err == nil {
		t.Fatal("a request got a token with the bucket empty")
	}
	report := Report(context.Background())
	for i := range 2 {
		if err := waitWithin(l, report, 100*time.Millisecond); err != nil {
			t.Fatalf("report %d waited although the queue is within reportJump: %v", i+1, err)
		}
	}
	if err := waitWithin(l, report, 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "past its deadline") {
		t.Fatalf("a third report, behind a queue longer than reportJump, did not fail at once: %v", err)
	}
	// The reports took their tokens from the bucket: a request now waits for them too.
	if l.bucket.Tokens() > -1.9 {
		t.Fatalf("bucket at %.1f tokens: the reports were not counted", l.bucket.Tokens())
	}
}

// TestClientReportLane: the dynamic client of New limits its requests by lane.
func TestClientReportLane(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns"}}`))
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL, QPS: 0.05, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := c.Dynamic.Resource(V1Beta1Clusters).Namespace("ns").Get(ctx, "c", metav1.GetOptions{})
		return err
	}
	if err := get(context.Background()); err != nil {
		t.Fatalf("first request: %v", err)
	}
	if err := get(context.Background()); err == nil {
		t.Fatal("a second request within 200ms passed a limit of one per 20s")
	}
	if err := get(Report(context.Background())); err != nil {
		t.Fatalf("a report waited behind the bulk requests: %v", err)
	}
	if c.Config.RateLimiter != nil {
		t.Error("Config carries the lane limiter: clients built from it would share it")
	}
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/topoflow/topoflow/tests/extension"
)

// Fault kinds, each a way a part of the system fails on a real management cluster.
const (
	fWorkerKill    = "worker kill -9"
	fStarterKill   = "starter kill -9"
	fTemporal      = "Temporal restart"
	fAPIServer     = "API server stopped"
	fExtensionSlow = "extension slow past its timeout"
	fExtensionDown = "extension down"
)

var faultKinds = []string{fWorkerKill, fStarterKill, fTemporal, fAPIServer, fExtensionSlow, fExtensionDown}

// fault is one injected fault: what, when, and for how long the part was away.
type fault struct {
	Kind       string
	Start, End time.Time
}

// faultPlan bounds the faults: how many, the gaps between them and how long each lasts.
type faultPlan struct {
	Count                int
	GapMin, GapMax       time.Duration
	OutageMin, OutageMax time.Duration // the API server's
	Kinds                []string
}

// injector injects faults into the local stack (loopback only: its own processes and scripts).
type injector struct {
	plan  faultPlan
	rng   *rand.Rand
	procs *processes
	ext   *extension.Server
	root  string
	log   func(format string, args ...any)

	mu   sync.Mutex
	done []fault
}

func (in *injector) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(in.rng.Int64N(int64(hi-lo)))
}

// run injects plan.Count faults at random gaps, or fewer if ctx ends first. The kinds come in
// rounds, each a seeded shuffle of all of them, so every kind is injected about as often (a
// short run of as many faults as kinds covers each once).
func (in *injector) run(ctx context.Context) {
	var round []string
	for i := 0; i < in.plan.Count; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(in.between(in.plan.GapMin, in.plan.GapMax)):
		}
		if len(round) == 0 {
			round = slices.Clone(in.plan.Kinds)
			in.rng.Shuffle(len(round), func(a, b int) { round[a], round[b] = round[b], round[a] })
		}
		kind := round[0]
		round = round[1:]
		f := fault{Kind: kind, Start: time.Now()}
		in.log("fault %d/%d: %s", i+1, in.plan.Count, kind)
		if err := in.inject(ctx, kind); err != nil {
			in.log("fault %s: %v", kind, err)
		}
		f.End = time.Now()
		in.mu.Lock()
		in.done = append(in.done, f)
		in.mu.Unlock()
	}
}

// inject causes one fault and, for those with a duration, waits until the part is back.
func (in *injector) inject(ctx context.Context, kind string) error {
	switch kind {
	case fWorkerKill, fStarterKill:
		name := "worker"
		if kind == fStarterKill {
			name = "starter"
		}
		in.procs.kill(name)
		sleep(ctx, in.between(500*time.Millisecond, 5*time.Second))
		return in.procs.start(name)
	case fTemporal:
		if err := in.script("stop.sh", "temporal"); err != nil {
			return err
		}
		sleep(ctx, in.between(2*time.Second, 10*time.Second))
		return in.script("up.sh")
	case fAPIServer:
		if err := in.script("stop.sh", "kube-apiserver"); err != nil {
			return err
		}
		sleep(ctx, in.between(in.plan.OutageMin, in.plan.OutageMax))
		return in.script("up.sh")
	case fExtensionSlow:
		d := in.between(10*time.Second, 30*time.Second)
		// Handlers time out after 5 s (the test extension's discovery says so).
		in.ext.SlowFor(d, 7*time.Second)
		sleep(ctx, d+7*time.Second)
	case fExtensionDown:
		in.ext.DownFor(30 * time.Second)
		sleep(ctx, 30*time.Second)
	}
	return nil
}

func (in *injector) script(name string, args ...string) error {
	out, err := exec.Command(filepath.Join(in.root, "deploy/stack", name), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %v: %w: %s", name, args, err, out)
	}
	return nil
}

func (in *injector) faults() []fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]fault(nil), in.done...)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// processes runs topoflow's worker and starter for the soak, each in its own process group so a
// kill takes all of it.
type processes struct {
	mu   sync.Mutex
	cmds map[string]*exec.Cmd
	args map[string][]string
	logs string
}

func (p *processes) start(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(p.logs, "soak-"+name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.args[name][0], p.args[name][1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); f.Close() }()
	p.cmds[name] = cmd
	return nil
}

// kill sends SIGKILL to the process group.
func (p *processes) kill(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cmd := p.cmds[name]; cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	delete(p.cmds, name)
}

func (p *processes) stopAll() {
	for _, name := range []string{"starter", "worker"} {
		p.mu.Lock()
		cmd := p.cmds[name]
		p.mu.Unlock()
		if cmd != nil && cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
	}
	time.Sleep(2 * time.Second)
	for _, name := range []string{"starter", "worker"} {
		p.kill(name)
	}
}

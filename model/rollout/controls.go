package rollout

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Annotations on a Rollout that operate it, for GitOps (the CLI and the Temporal UI send the same
// controls as workflow Updates).
const (
	// ApproveAnnotation lists approval tokens, comma-separated ("canary@gen-1,canary/after@gen-1").
	ApproveAnnotation = "topoflow.dev/approve"
	// PausedAnnotation "true" holds new Cluster changes while it is set.
	PausedAnnotation = "topoflow.dev/paused"
	// AbortAnnotation "true" ends the rollout; Clusters already moved stay as they are.
	AbortAnnotation = "topoflow.dev/abort"
	// SkipAnnotation lists Clusters ("namespace/name", comma-separated) the rollout leaves out.
	SkipAnnotation = "topoflow.dev/skip"
)

// FromAnnotations fills the controls of an observation from a Rollout's annotations.
func FromAnnotations(o *Observation, ann map[string]string) {
	o.Approvals = splitList(ann[ApproveAnnotation])
	o.Skips = splitList(ann[SkipAnnotation])
	o.Paused = strings.EqualFold(strings.TrimSpace(ann[PausedAnnotation]), "true")
	o.Abort = strings.EqualFold(strings.TrimSpace(ann[AbortAnnotation]), "true")
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Control is an operator's command, as a workflow Update (or Signal) carries it.
type Control struct {
	// Action is approve, pause, resume, abort or skip.
	Action string `json:"action"`
	// Token, for approve: the gate approved (empty: the one the rollout waits at).
	Token string `json:"token,omitempty"`
	// Cluster, for skip: "namespace/name".
	Cluster string `json:"cluster,omitempty"`
	// By names who sent it, for the history and the Events.
	By string `json:"by,omitempty"`
}

// Validate says why the control cannot be taken now (nil: it can), without changing anything.
func (s *State) Validate(c Control) error {
	if s.finished() {
		return fmt.Errorf("the rollout has ended (%s)", s.Phase())
	}
	switch c.Action {
	case "approve":
		pending := s.PendingApproval()
		if pending == "" {
			return errors.New("the rollout waits at no approval gate")
		}
		if c.Token != "" && c.Token != pending {
			return fmt.Errorf("the rollout waits for approval %q, not %q", pending, c.Token)
		}
	case "pause":
		if s.Paused {
			return errors.New("already paused")
		}
	case "resume":
		if !s.Paused && !s.Halted {
			if s.AnnotationPaused {
				return fmt.Errorf("paused by the annotation %s: remove it to resume", PausedAnnotation)
			}
			return errors.New("neither paused nor halted")
		}
	case "abort":
	case "skip":
		cl := s.cluster(c.Cluster)
		if cl == nil {
			return fmt.Errorf("%q is not selected by this rollout (want namespace/name)", c.Cluster)
		}
		if cl.Terminal() && cl.State != Failed {
			return fmt.Errorf("%s is already %s", c.Cluster, cl.State)
		}
	default:
		return fmt.Errorf("unknown action %q (want approve, pause, resume, abort or skip)", c.Action)
	}
	return nil
}

// Apply takes a control that Validate accepted. Resuming a halted rollout forgives the failures
// so far (the failure budget counts anew); skipping a failed Cluster takes it off the failures.
func (s *State) Apply(c Control, now time.Time) {
	by := ""
	if c.By != "" {
		by = " by " + c.By
	}
	switch c.Action {
	case "approve":
		if p := s.PendingApproval(); p != "" {
			s.Approved = append(s.Approved, p)
			s.note(false, "Approved", "%s approved%s", p, by)
		}
	case "pause":
		s.Paused = true
		s.note(false, "Paused", "paused%s", by)
	case "resume":
		s.note(false, "Resumed", "resumed%s", by)
		s.Paused = false
		if s.Halted {
			s.Halted = false
			s.Forgiven = s.count(Failed)
		}
	case "abort":
		s.abort("aborted" + by)
	case "skip":
		if cl := s.cluster(c.Cluster); cl != nil {
			s.finish(cl, Skipped, "skipped"+by, now)
			s.Forgiven = min(s.Forgiven, s.count(Failed))
		}
	}
}

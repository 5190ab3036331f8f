package activities

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/topology"
)

// event records a Kubernetes Event on the Cluster, for `kubectl describe cluster`: what
// topoflow did (topology created, upgrade started, a part's step, hook blocking, delete steps).
// Activities.Events is client-go's recorder: asynchronous, identical Events within a while are
// folded into one with a count, and a burst per Cluster is rate limited. nil records nothing.
func (a *Activities) event(c *hubv1.Cluster, eventType, reason, format string, args ...any) {
	if a.Events == nil || c == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: hubv1.GroupVersion.String(), Kind: "Cluster",
		Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion}
	a.Events.Event(ref, eventType, reason, fmt.Sprintf(format, args...))
}

// changeEvents records the changes a scope's apply made (see topology.ControlPlaneChanges).
func (a *Activities) changeEvents(c *hubv1.Cluster, changes []topology.Change) {
	for _, ch := range changes {
		a.event(c, corev1.EventTypeNormal, ch.Reason, "%s", ch.Message)
	}
}

// NewEventRecorder is the recorder for Activities.Events: Events are sent to the API server as
// component "topoflow", at most a burst of 50 per Cluster and then one per 5 minutes for the
// same reason and message (client-go's spam filter and aggregation). stop flushes and ends it.
func NewEventRecorder(cfg *rest.Config) (rec record.EventRecorder, stop func(), err error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	b := record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{BurstSize: 50}))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "topoflow"}), b.Shutdown, nil
}

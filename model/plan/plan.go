// Package plan previews what topoflow would do to one Cluster, without doing it: the desired
// objects and, given the current objects, each object's action (create, update in place, rotate,
// delete, unchanged) with a diff. It is the offline replacement for the removed
// `clusterctl alpha topology plan`.
package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/topology"
	"github.com/topoflow/topoflow/model/upgrade"
	"github.com/topoflow/topoflow/model/validation"
)

// Action is what applying the plan does to one object.
type Action string

// Actions.
const (
	Create    Action = "create"
	Update    Action = "update"
	Rotate    Action = "rotate"
	Delete    Action = "delete"
	Unchanged Action = "unchanged"
	// Pending: the object is desired but not written in this pass (Change.Reason says why).
	Pending Action = "pending"
)

// ActionAnnotation carries each object's action in the printed List.
const ActionAnnotation = "topoflow.dev/plan-action"

// Change is the plan for one object.
type Change struct {
	Kind, Name string
	Action     Action
	// Replaces names the template a rotated template replaces.
	Replaces string `json:",omitempty"`
	// Diff is a unified diff of the fields topoflow sets (current vs desired).
	Diff string `json:",omitempty"`
	// Reason says why a pending object waits: "pending upgrade" (it keeps its version while the
	// topology's differs), "pending create" (a new pool while the control plane is not stable),
	// with "deferred" or "held" for pools whose upgrade the topology defers or holds.
	Reason string `json:",omitempty"`
}

// Result is a plan.
type Result struct {
	// Objects are the desired objects, in apply order.
	Objects []*unstructured.Unstructured
	// Changes are present when current objects were given: desired objects first, then deletions.
	Changes []Change
	// Variables are the Cluster's variables after defaulting.
	Variables []hubv1.ClusterVariable
	// Course is the upgrade's way to its end (Through, where an upgrade is due; else nil).
	Course *upgrade.Course `json:",omitempty"`

	// decision is the one the plan shows (its typed objects, in topoflow's version).
	decision *topology.Decision
}

// Input is a parsed plan input.
type Input struct {
	// Desired is the computation input, on the hub (model/api/v1beta2).
	Desired desired.Input
	// Current are the Cluster's current topology objects (may be empty), the cluster.x-k8s.io
	// ones as v1beta2 (the plan compares on the hub).
	Current []*unstructured.Unstructured
	// Old is the Cluster as stored, for the update rules (nil: a new Cluster). A plan of a
	// stored Cluster passes the Cluster itself; a plan file with current objects passes what
	// runs (the control plane's version stands in for the old spec.topology.version).
	Old *hubv1.Cluster
	// Ledger is what the Cluster's lifecycle hooks answered (its workflow's state query); nil
	// plans as if every hook let every move through.
	Ledger *upgrade.Ledger
	// Unhandled are the hooks no extension handles, which the apply lets through without a call
	// (topology.Input.Unhandled).
	Unhandled []string
	// APIVersion is the cluster.x-k8s.io version the plan is printed in (V1Beta2 or V1Beta1); empty
	// means the version MachineDeployments are written in (Desired.WorkloadAPIVersion).
	APIVersion string
}

// PlannedShimUID stands in the plan for the uid of the cluster shim Secret the apply creates
// before the infrastructure cluster and the control plane (desired.Shim).
const PlannedShimUID = "planned-shim-uid"

// FromObjects sorts the documents of a plan file: exactly one ClusterClass, exactly one Cluster,
// the templates the class references, and any current objects of the Cluster (objects labelled
// cluster.x-k8s.io/cluster-name with the Cluster's name). Errors name every problem found.
func FromObjects(objs []*unstructured.Unstructured, seed uint64) (*Input, error) {
	// References' versions are a v1beta1 notion (the hub's contract references have none): read
	// from the documents as v1beta1 serves them, for a plan printed in v1beta1.
	if err := strictV1Beta1(objs); err != nil {
		return nil, err
	}
	v1beta1Docs, err := conversion.DocumentsV1Beta1(objs)
	if err != nil {
		return nil, fmt.Errorf("plan input: %w", err)
	}
	if objs, err = conversion.DocumentsV1Beta2(objs); err != nil {
		return nil, fmt.Errorf("plan input: %w", err)
	}
	class, cluster, rest, err := classAndCluster(objs)
	if err != nil {
		return nil, err
	}
	defaultNamespace(class, cluster)
	if err := validation.DefaultCluster(cluster); err != nil {
		return nil, fmt.Errorf("plan input: %w", err)
	}
	if cluster.UID == "" {
		cluster.UID = types.UID("planned-" + cluster.Namespace + "-" + cluster.Name)
	}
	in := &Input{Desired: desired.Input{
		Cluster:   cluster,
		Class:     class,
		Templates: map[string]*unstructured.Unstructured{},
		Names:     names.Source{Seed: seed},
		Current: desired.Current{
			MachineDeployments: map[string]*hubv1.MachineDeployment{},
			MachinePools:       map[string]*hubv1.MachinePool{},
			Templates:          map[string]*unstructured.Unstructured{},
			RefVersions:        desired.RefVersions{},
		},
	}}
	addRefVersions(in.Desired.Current.RefVersions, v1beta1Docs, cluster.Name)
	in.Desired.ControlPlaneContract = controlPlaneContract(rest, class)
	if err := in.sort(rest); err != nil {
		return nil, err
	}
	if topo := cluster.Spec.Topology; topo.IsDefined() && (topo.ClassRef.Name != class.Name || cluster.ClassNamespace() != class.Namespace) {
		return nil, fmt.Errorf("plan input: Cluster %s/%s: spec.topology.classRef names ClusterClass %s/%s, but the file holds ClusterClass %s/%s",
			cluster.Namespace, cluster.Name, cluster.ClassNamespace(), topo.ClassRef.Name, class.Namespace, class.Name)
	}
	if cluster.Spec.ControlPlaneRef.IsDefined() || cluster.Spec.InfrastructureRef.IsDefined() {
		in.Old = cluster.DeepCopy()
		if cp := in.Desired.Current.ControlPlane; cp != nil && cluster.Spec.Topology.IsDefined() {
			if v, _, _ := contract.String(cp, contract.ControlPlaneVersion); v != "" {
				in.Old.Spec.Topology.Version = v
			}
		}
	}
	return in, nil
}

// sort files the documents other than the class and the Cluster: the class's templates, the
// Cluster's current objects, its Machines and the workload cluster's Nodes (which decide whether
// pools upgrade, as Cluster API reads a management cluster, where Machines are served: a
// MachineDeployment is upgrading only while one of the file's Machines says so). Errors name every
// problem found.
func (in *Input) sort(docs []*unstructured.Unstructured) error {
	cluster := in.Desired.Cluster
	wanted := map[string]bool{}
	for _, tr := range desired.TemplateRefs(in.Desired.Class) {
		wanted[desired.RefKey(tr.Ref)] = true
	}
	var problems []string
	var machines []unstructured.Unstructured
	nodes := map[string]*unstructured.Unstructured{}
	for _, o := range docs {
		if o.GetAPIVersion() == "v1" && o.GetKind() == "Node" {
			nodes[o.GetName()] = o // the workload cluster's, for MachinePools' nodeRefs
			continue
		}
		if o.GetNamespace() == "" {
			o.SetNamespace(cluster.Namespace)
		}
		if isClusterAPI(o, "Machine") && o.GetLabels()[labels.ClusterName] == cluster.Name {
			machines = append(machines, *o)
			continue
		}
		key := desired.RefKey(&corev1.ObjectReference{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()})
		switch {
		case wanted[key]:
			in.Desired.Templates[key] = o
		case o.GetLabels()[labels.ClusterName] == cluster.Name:
			in.Current = append(in.Current, o)
			if err := in.addCurrent(o, key); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	in.Desired.Current.MachineVersions = upgrade.MachineVersionsOf(machines)
	var err error
	if in.Desired.Current.NodeVersions, err = nodeVersions(in.Desired.Current.MachinePools, nodes); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("plan input: %s", strings.Join(problems, "; "))
	}
	return nil
}

// nodeVersions are the kubelet versions of the Nodes the MachinePools' status.nodeRefs name, from
// the file's Nodes (upgrade.NodeVersions; Cluster API's check.IsMachinePoolUpgrading reads them from
// the workload cluster and fails when one is missing). Nil when no MachinePool has Nodes.
func nodeVersions(mps map[string]*hubv1.MachinePool, nodes map[string]*unstructured.Unstructured) (upgrade.NodeVersions, error) {
	var out upgrade.NodeVersions
	for _, mp := range mps {
		for _, ref := range mp.Status.NodeRefs {
			node, ok := nodes[ref.Name]
			if !ok {
				return nil, fmt.Errorf("MachinePool %s: status.nodeRefs names Node %s, which the plan file does not hold (the plan needs its status.nodeInfo.kubeletVersion to tell whether the MachinePool upgrades)", mp.Name, ref.Name)
			}
			if out == nil {
				out = upgrade.NodeVersions{}
			}
			v, _, _ := unstructured.NestedString(node.Object, "status", "nodeInfo", "kubeletVersion")
			out[mp.Name] = append(out[mp.Name], v)
		}
	}
	return out, nil
}

// classAndCluster takes the one ClusterClass and the one Cluster from a plan file's documents,
// decoded; rest are the other documents.
func classAndCluster(objs []*unstructured.Unstructured) (*hubv1.ClusterClass, *hubv1.Cluster, []*unstructured.Unstructured, error) {
	var problems []string
	var classes, clusters []*unstructured.Unstructured
	rest := []*unstructured.Unstructured{}
	for _, o := range objs {
		switch {
		case isClusterAPI(o, "ClusterClass"):
			classes = append(classes, o)
		case isClusterAPI(o, "Cluster"):
			clusters = append(clusters, o)
		default:
			rest = append(rest, o)
		}
	}
	if len(classes) != 1 {
		problems = append(problems, fmt.Sprintf("want exactly one ClusterClass, found %d", len(classes)))
	}
	if len(clusters) != 1 {
		problems = append(problems, fmt.Sprintf("want exactly one Cluster, found %d", len(clusters)))
	}
	if len(problems) > 0 {
		return nil, nil, nil, fmt.Errorf("plan input: %s", strings.Join(problems, "; "))
	}
	class := &hubv1.ClusterClass{}
	if err := decode.FromUnstructured(classes[0], class); err != nil {
		problems = append(problems, err.Error())
	}
	cluster := &hubv1.Cluster{}
	if err := decode.FromUnstructured(clusters[0], cluster); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return nil, nil, nil, fmt.Errorf("plan input: %s", strings.Join(problems, "; "))
	}
	return class, cluster, rest, nil
}

// defaultNamespace puts objects without a namespace in "default", as kubectl would.
func defaultNamespace(class *hubv1.ClusterClass, cluster *hubv1.Cluster) {
	if class.Namespace == "" {
		class.Namespace = "default"
	}
	if cluster.Namespace == "" {
		cluster.Namespace = "default"
	}
}

// addCurrent records a current object in the computation's view of the present.
func (in *Input) addCurrent(o *unstructured.Unstructured, key string) error {
	cluster := in.Desired.Cluster
	switch {
	case isClusterAPI(o, "MachineDeployment"):
		md := &hubv1.MachineDeployment{}
		if err := decode.FromUnstructured(o, md); err != nil {
			return err
		}
		in.Desired.Current.MachineDeployments[md.Labels[labels.MachineDeploymentName]] = md
	case isClusterAPI(o, "MachinePool"):
		mp := &hubv1.MachinePool{}
		if err := decode.FromUnstructured(o, mp); err != nil {
			return err
		}
		in.Desired.Current.MachinePools[mp.Labels[labels.MachinePoolName]] = mp
	case cluster.Spec.ControlPlaneRef.IsDefined() && o.GetKind() == cluster.Spec.ControlPlaneRef.Kind && o.GetName() == cluster.Spec.ControlPlaneRef.Name:
		in.Desired.Current.ControlPlane = o
	case cluster.Spec.InfrastructureRef.IsDefined() && o.GetKind() == cluster.Spec.InfrastructureRef.Kind && o.GetName() == cluster.Spec.InfrastructureRef.Name:
		in.Desired.Current.InfrastructureCluster = o
	case isClusterAPI(o, "MachineHealthCheck"):
		mhc := &hubv1.MachineHealthCheck{}
		if err := decode.FromUnstructured(o, mhc); err != nil {
			return err
		}
		in.Desired.Current.MachineHealthChecks = append(in.Desired.Current.MachineHealthChecks, mhc)
	case o.GetKind() == "MachineSet":
		in.Desired.Current.MachineSets = append(in.Desired.Current.MachineSets, o)
	case strings.HasSuffix(o.GetKind(), "Template"):
		in.Desired.Current.Templates[key] = o
		if _, ok := o.GetLabels()[labels.MachineDeploymentName]; ok {
			in.Desired.Current.PoolTemplates = append(in.Desired.Current.PoolTemplates, o)
		}
	}
	return nil
}

// Compute validates the class and the Cluster, then plans the Cluster's next pass.
func Compute(in *Input) (*Result, error) {
	return compute(in, false)
}

// Through validates the class and the Cluster, then plans the whole change the Cluster's spec asks
// for: where an upgrade is due, the pass that ends it (topology.Through: the upgrade's course with
// every hook let through, then the pass over the state it leaves), set against the current
// objects, with the course in Result.Course; else the next pass, as Compute. Fleet plans
// (Categorize) are made with it.
func Through(in *Input) (*Result, error) {
	return compute(in, true)
}

func compute(in *Input, through bool) (*Result, error) {
	if err := validate(in); err != nil {
		return nil, err
	}
	// The same decision the apply activity makes, with the hook ledger of the Cluster's workflow
	// (nil: as if the upgrade hooks allowed every move).
	tin := topology.Input{Desired: in.Desired, Ledger: in.Ledger, Unhandled: in.Unhandled}
	var dec *topology.Decision
	var course *upgrade.Course
	var err error
	if through {
		dec, course, err = topology.Through(tin)
	} else {
		dec, err = topology.Decide(tin)
	}
	if err != nil {
		return nil, err
	}
	state := dec.State
	if state.ShimNeeded {
		// The apply creates the shim Secret first and makes it an owner of what it creates.
		state.AddShimOwner(desired.ShimOwner(in.Desired.Cluster, PlannedShimUID))
	}
	objs, err := state.AllObjects()
	if err != nil {
		return nil, err
	}
	// The plan compares on the hub: pools and health checks as v1beta2, as the current objects
	// are read (the Cluster's intent is compared by desired.ClusterPatch).
	for i, o := range objs {
		if objs[i], err = state.InServedVersion(o, conversion.V1Beta2GroupVersion.String()); err != nil {
			return nil, err
		}
	}
	res := &Result{Objects: objs, Variables: state.Variables, Course: course, decision: dec}
	if len(in.Current) == 0 && !in.Desired.Cluster.Spec.ControlPlaneRef.IsDefined() {
		return res, in.print(res)
	}
	res.Changes = changes(in, dec, objs)
	// Deletions are the decision's: what the apply deletes (Cluster API's topology controller
	// deletes only objects of the kinds it writes, and a pool's old template only once no
	// MachineSet uses it).
	var deletes []Change
	for _, r := range dec.Deletes.All() {
		deletes = append(deletes, Change{Kind: r.Kind, Name: r.Name, Action: Delete})
	}
	sort.Slice(deletes, func(i, j int) bool { return deletes[i].Kind+deletes[i].Name < deletes[j].Kind+deletes[j].Name })
	res.Changes = append(res.Changes, deletes...)
	return res, in.print(res)
}

// print puts the objects in the version the plan is printed in (compared above in topoflow's).
func (in *Input) print(res *Result) error {
	v := in.APIVersion
	if v == "" {
		v = V1Beta1
		if in.Desired.WorkloadAPIVersion == conversion.V1Beta2GroupVersion.String() {
			v = V1Beta2
		}
	}
	for i, o := range res.Objects {
		var err error
		if res.Objects[i], err = printedIn(res.decision.State, o, v); err != nil {
			return err
		}
	}
	return nil
}

// validate applies the webhooks' rules to the class and the Cluster, and the version rules against
// what runs.
func validate(in *Input) error {
	c, class := in.Desired.Cluster, in.Desired.Class
	errs := validation.ClusterClass(class, nil, nil)
	errs = append(errs, validation.Cluster(c, in.Old, class, nil)...)
	if in.Old != nil && c.Spec.Topology.IsDefined() {
		cur := in.Desired.Current
		running, err := upgrade.InputFrom(c, class, cur.ControlPlane, cur.MachineDeployments, cur.MachinePools, cur.MachineVersions, cur.NodeVersions)
		if err != nil {
			return err
		}
		errs = append(errs, validation.VersionAgainstRunning(c, in.Old, running)...)
	}
	if len(errs) > 0 {
		return &desired.InvalidError{Object: "ClusterClass " + class.Namespace + "/" + class.Name + " and Cluster " + c.Namespace + "/" + c.Name, Errs: errs}
	}
	return nil
}

// changes says what applying does to each desired object, annotating it with its action.
func changes(in *Input, dec *topology.Decision, objs []*unstructured.Unstructured) []Change {
	pending := dec.State.PendingObjects()
	poolState := map[string]string{}
	for _, name := range dec.Result.Deferred {
		poolState[name] = "deferred"
	}
	for _, name := range dec.Result.Held {
		poolState[name] = "held"
	}
	reason := func(o *unstructured.Unstructured) string {
		why := pending[o.GetKind()+" "+o.GetName()]
		if why == "" {
			return ""
		}
		if s := poolState[o.GetLabels()[labels.MachineDeploymentName]+o.GetLabels()[labels.MachinePoolName]]; s != "" {
			why += ", " + s
		}
		return why
	}
	current := map[string]*unstructured.Unstructured{}
	for _, c := range in.Current {
		current[c.GetKind()+"/"+c.GetName()] = c
	}
	// The Cluster always exists: its intent is compared with the Cluster itself.
	if u, err := desired.ToIntent(in.Desired.Cluster); err == nil {
		current["Cluster/"+u.GetName()] = u
	}
	// Templates rotated away from: a desired template of the same role replaces them.
	replaced := rotations(in.Desired.Current.Templates, objs)
	var out []Change
	for _, o := range objs {
		key := o.GetKind() + "/" + o.GetName()
		ch := Change{Kind: o.GetKind(), Name: o.GetName()}
		cur, ok := current[key]
		switch {
		case reason(o) != "":
			ch.Action, ch.Reason = Pending, reason(o)
		case !ok && replaced[key] != "":
			ch.Action, ch.Replaces = Rotate, replaced[key]
			if old := current[o.GetKind()+"/"+replaced[key]]; old != nil {
				ch.Diff = diff(old, o)
			}
		case !ok:
			ch.Action = Create
		case isClusterAPI(o, "Cluster"):
			// The Cluster is patched, not applied: it changes when the patch is not empty (an
			// upgrade-step annotation to remove included), as desired.ClusterPatch decides.
			switch p, err := desired.ClusterPatch(in.Desired.Cluster, o); {
			case err == nil && p == nil:
				ch.Action = Unchanged
			case err == nil:
				ch.Action, ch.Diff = Update, "patch Cluster "+o.GetName()+": "+string(p)+"\n"
			default:
				ch.Action, ch.Diff = Update, diff(cur, o)
			}
		case desired.Compare(cur, o) == desired.Unchanged:
			ch.Action = Unchanged
		default:
			ch.Action, ch.Diff = Update, diff(cur, o)
		}
		out = append(out, ch)
		annotate(o, ch.Action)
	}
	return out
}

// rotations maps each desired template that replaces a current one (same kind and role labels,
// different name) to the name it replaces.
func rotations(currentTemplates map[string]*unstructured.Unstructured, objs []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		for _, cur := range currentTemplates {
			if cur.GetKind() == o.GetKind() && cur.GetName() != o.GetName() &&
				cur.GetAnnotations()[labels.ClonedFromName] == o.GetAnnotations()[labels.ClonedFromName] &&
				cur.GetLabels()[labels.MachineDeploymentName] == o.GetLabels()[labels.MachineDeploymentName] &&
				!nameIn(cur.GetName(), objs, cur.GetKind()) {
				out[o.GetKind()+"/"+o.GetName()] = cur.GetName()
			}
		}
	}
	return out
}

func nameIn(name string, objs []*unstructured.Unstructured, kind string) bool {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return true
		}
	}
	return false
}

func annotate(o *unstructured.Unstructured, a Action) {
	ann := o.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[ActionAnnotation] = string(a)
	o.SetAnnotations(ann)
}

// diff is a unified diff of the fields desired sets, current first.
func diff(current, want *unstructured.Unstructured) string {
	w := desired.Intent(want).Object
	delete(w["metadata"].(map[string]any), "annotations")
	if ann := want.GetAnnotations(); len(ann) > 0 {
		a := map[string]any{}
		for k, v := range ann {
			if k != ActionAnnotation {
				a[k] = v
			}
		}
		if len(a) > 0 {
			w["metadata"].(map[string]any)["annotations"] = a
		}
	}
	have := desired.Project(current.Object, w)
	a, _ := toYAML(have)
	b, _ := toYAML(w)
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b),
		FromFile: "current " + current.GetKind() + " " + current.GetName(),
		ToFile:   "desired " + want.GetKind() + " " + want.GetName(),
		Context:  2,
	})
	return d
}

func toYAML(v any) (string, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	y, err := yaml.JSONToYAML(js)
	return string(y), err
}

// List wraps the desired objects in a Kubernetes List.
func (r *Result) List() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, o := range r.Objects {
		list.Items = append(list.Items, *o)
	}
	return list
}

// addRefVersions records the versions of the Cluster's references and of its current pools'
// template references, read from the documents as v1beta1 serves them (desired.RefVersions).
func addRefVersions(rv desired.RefVersions, v1beta1Docs []*unstructured.Unstructured, cluster string) {
	refAt := func(o *unstructured.Unstructured, path ...string) *corev1.ObjectReference {
		m, ok, _ := unstructured.NestedStringMap(o.Object, path...)
		if !ok || m["apiVersion"] == "" {
			return nil
		}
		return &corev1.ObjectReference{APIVersion: m["apiVersion"], Kind: m["kind"], Name: m["name"]}
	}
	for _, o := range v1beta1Docs {
		switch {
		case isClusterAPI(o, "Cluster") && o.GetName() == cluster:
			rv.Add("Cluster", cluster, refAt(o, "spec", "infrastructureRef"), refAt(o, "spec", "controlPlaneRef"))
		case (isClusterAPI(o, "MachineDeployment") || isClusterAPI(o, "MachinePool")) && o.GetLabels()[labels.ClusterName] == cluster:
			rv.Add(o.GetKind(), o.GetName(), refAt(o, "spec", "template", "spec", "bootstrap", "configRef"), refAt(o, "spec", "template", "spec", "infrastructureRef"))
		}
	}
}

// strictV1Beta1 reads the file's v1beta1 Clusters, ClusterClasses and pools strictly, as written:
// Cluster API's conversion to the hub drops a field it does not know, and a plan file's typo must
// be an error, not a field ignored (v1beta2 documents are read strictly on the hub).
func strictV1Beta1(objs []*unstructured.Unstructured) error {
	var problems []string
	for _, o := range objs {
		if o.GetAPIVersion() != clusterv1.GroupVersion.String() {
			continue
		}
		var into any
		switch o.GetKind() {
		case "Cluster":
			into = &clusterv1.Cluster{}
		case "ClusterClass":
			into = &clusterv1.ClusterClass{}
		case "MachineDeployment":
			into = &clusterv1.MachineDeployment{}
		case "MachinePool":
			into = &clusterv1.MachinePool{}
		case "MachineHealthCheck":
			into = &clusterv1.MachineHealthCheck{}
		default:
			continue
		}
		if err := decode.FromUnstructured(o, into); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("plan input: %s", strings.Join(problems, "; "))
	}
	return nil
}

// controlPlaneContract is the contract the class's control plane follows, from the labels of its
// CustomResourceDefinition when the file holds it (contract.VersionOf, as Cluster API reads the
// CRD: contract.GetContractVersionForVersion); the v1beta1 contract otherwise.
func controlPlaneContract(docs []*unstructured.Unstructured, class *hubv1.ClusterClass) string {
	ref := class.Spec.ControlPlane.TemplateRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return contract.V1Beta1
	}
	kind := strings.TrimSuffix(ref.Kind, "Template")
	for _, d := range docs {
		if d.GetKind() != "CustomResourceDefinition" || d.GroupVersionKind().Group != "apiextensions.k8s.io" {
			continue
		}
		group, _, _ := unstructured.NestedString(d.Object, "spec", "group")
		crdKind, _, _ := unstructured.NestedString(d.Object, "spec", "names", "kind")
		if group == gv.Group && crdKind == kind {
			if c := contract.VersionOf(d.GetLabels(), gv.Version); c != "" {
				return c
			}
		}
	}
	return contract.V1Beta1
}

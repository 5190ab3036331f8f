package v1beta2_test

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// notNeeded lists the JSON paths of Cluster API's v1beta2 kinds that the package leaves out on
// purpose ("Kind:path"; a path covers everything under it). Everything else Cluster API has,
// the package has too, with the same wire shape: TestFieldsMatchClusterAPI fails otherwise, so
// leaving out a field (or forgetting one Cluster API adds) is a decision made here.
//
// Cluster, ClusterClass, MachineDeployment, MachinePool and MachineHealthCheck are complete:
// topoflow computes, validates or writes them, and what it reads back from the API server must
// encode unchanged. MachineSets and Machines are only read (which templates are still in use,
// which version the kubelets run), so their status keeps what the model reads.
var notNeeded = []string{
	// A MachineSet's v1beta1 leftovers (old conditions, failure and counters): topoflow reads
	// replicas and conditions from the v1beta2 fields only.
	"MachineSet:status.deprecated",
	// A Machine's addresses, lastUpdated, certificate expiry and drain/deletion timestamps are for
	// the Machine's own controllers and users; topoflow reads the spec, readiness, the Node
	// reference and the kubelet version (status.nodeInfo).
	"Machine:status.addresses",
	"Machine:status.lastUpdated",
	"Machine:status.certificatesExpiryDate",
	"Machine:status.deletion",
	// A Machine's v1beta1 leftovers (old conditions, failure): as for MachineSets.
	"Machine:status.deprecated",
}

// field is the wire shape of one JSON path: the tag's options, whether Go holds it as a pointer,
// and its kind (for types of Kubernetes' API packages, the type itself: both sides must use it).
type field struct {
	options string
	pointer bool
	kind    string
}

func (f field) String() string {
	p := ""
	if f.pointer {
		p = "*"
	}
	return fmt.Sprintf("%s%s [%s]", p, f.kind, f.options)
}

// fieldsOf lists every JSON path of a type. Lists add "[]" and maps "{}" to the path; a type that
// contains itself (JSON schemas) is followed once.
func fieldsOf(t reflect.Type) map[string]field {
	out := map[string]field{}
	var walk func(t reflect.Type, path string, stack []reflect.Type)
	walk = func(t reflect.Type, path string, stack []reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case foreign(t):
			return
		case t.Kind() == reflect.Slice:
			out[path+"[]"] = describe(t.Elem(), "")
			walk(t.Elem(), path+"[]", stack)
			return
		case t.Kind() == reflect.Map:
			out[path+"{}"] = describe(t.Elem(), "")
			walk(t.Elem(), path+"{}", stack)
			return
		case t.Kind() != reflect.Struct || slices.Contains(stack, t):
			return
		}
		stack = append(stack, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, options, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if sf.Anonymous && name == "" {
				walk(sf.Type, path, stack) // inlined: its fields are the parent's
				continue
			}
			if name == "" {
				name = sf.Name
			}
			p := strings.TrimPrefix(path+"."+name, ".")
			out[p] = describe(sf.Type, options)
			walk(sf.Type, p, stack)
		}
	}
	walk(t, "", nil)
	return out
}

// foreign says t comes from Kubernetes' API packages (metav1.Time, intstr.IntOrString,
// apiextensionsv1.JSON, corev1.ObjectReference and such): both sides use those types as they are.
func foreign(t reflect.Type) bool {
	return strings.HasPrefix(t.PkgPath(), "k8s.io/")
}

func describe(t reflect.Type, options string) field {
	f := field{options: normalize(options)}
	if t.Kind() == reflect.Pointer {
		f.pointer, t = true, t.Elem()
	}
	if foreign(t) {
		f.kind = t.String()
	} else {
		f.kind = t.Kind().String()
	}
	return f
}

// normalize sorts a tag's options ("omitzero,omitempty" is "omitempty,omitzero").
func normalize(options string) string {
	if options == "" {
		return ""
	}
	o := strings.Split(options, ",")
	sort.Strings(o)
	return strings.Join(o, ",")
}

// excluded says path (of kind) is on the notNeeded list, or under a path that is.
func excluded(kind, path string) bool {
	for _, n := range notNeeded {
		k, p, _ := strings.Cut(n, ":")
		if k == kind && (path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[]") || strings.HasPrefix(path, p+"{}")) {
			return true
		}
	}
	return false
}

// Every JSON path of Cluster API's v1beta2 kinds is in the package's types with the same wire
// shape (tag options, pointer or value, kind), or on the notNeeded list; the package has no path
// Cluster API lacks; and the notNeeded list names only paths Cluster API has and the package
// leaves out.
func TestFieldsMatchClusterAPI(t *testing.T) {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, kind := range names {
		t.Run(kind, func(t *testing.T) {
			theirs := fieldsOf(reflect.TypeOf(kinds[kind].capi()))
			ours := fieldsOf(reflect.TypeOf(kinds[kind].ours()))
			assert.Greater(t, len(theirs), 10, "walking Cluster API's type found too few fields")
			for _, path := range sortedKeys(theirs) {
				want := theirs[path]
				got, ok := ours[path]
				switch {
				case excluded(kind, path):
					assert.False(t, ok, "%s is on the notNeeded list but the package has it", path)
				case !ok:
					t.Errorf("%s (%v) is missing: add it, or add it to notNeeded with the reason", path, want)
				case got != want:
					t.Errorf("%s is %v here, %v in Cluster API", path, got, want)
				}
			}
			for _, path := range sortedKeys(ours) {
				if _, ok := theirs[path]; !ok {
					t.Errorf("%s is not a Cluster API v1beta2 field", path)
				}
			}
		})
	}
	for _, n := range notNeeded {
		kind, path, _ := strings.Cut(n, ":")
		k, ok := kinds[kind]
		if !ok {
			t.Errorf("notNeeded: %s: unknown kind", n)
			continue
		}
		if _, ok := fieldsOf(reflect.TypeOf(k.capi()))[path]; !ok {
			t.Errorf("notNeeded: %s is not a Cluster API field", n)
		}
	}
}

func sortedKeys(m map[string]field) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

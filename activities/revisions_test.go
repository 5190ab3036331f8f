package activities

import (
	"strings"
	"testing"

	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// TestVariablesCurrent: a revision waits for the class's status of its generation, whether its
// variables are inline or discovered; the error says which.
func TestVariablesCurrent(t *testing.T) {
	discovering := []hubv1.ClusterClassPatch{{Name: "ext", External: &hubv1.ExternalPatchDefinition{DiscoverVariablesExtension: "discover.ext"}}}
	cases := []struct {
		name          string
		generation    int64
		observed      int64
		patches       []hubv1.ClusterClassPatch
		wantErrSaying string
	}{
		{"current", 3, 3, nil, ""},
		{"current, discovered", 3, 3, discovering, ""},
		{"status not written yet", 1, 0, nil, "its status has not caught up with generation 1"},
		{"discovery behind", 4, 3, discovering, "variable discovery has not caught up with generation 4"},
	}
	for _, c := range cases {
		class := &hubv1.ClusterClass{}
		class.Namespace, class.Name, class.Generation = "ns", "qs", c.generation
		class.Status.ObservedGeneration = c.observed
		class.Spec.Patches = c.patches
		err := variablesCurrent(class)
		switch {
		case c.wantErrSaying == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErrSaying != "" && (err == nil || !strings.Contains(err.Error(), c.wantErrSaying) || !strings.Contains(err.Error(), "ClusterClass ns/qs")):
			t.Errorf("%s: error %v; want one saying %q", c.name, err, c.wantErrSaying)
		}
	}
}

func ptr[T any](v T) *T { return &v }

package rollout

import (
	"strings"
	"testing"

	"github.com/topoflow/topoflow/model/revision"
)

func TestOneClass(t *testing.T) {
	tests := []struct {
		name    string
		classOf map[string]string
		class   string
		why     string
	}{
		{"one class", map[string]string{"ns/a": "ns/gold", "ns/b": "ns/gold"}, "ns/gold", ""},
		{"two classes", map[string]string{"ns/a": "ns/gold", "ns/b": "ns/silver"}, "", "ns/gold: ns/a; ns/silver: ns/b"},
		{"same name, two namespaces", map[string]string{"x/a": "x/gold", "y/b": "y/gold"}, "", "x/gold: x/a; y/gold: y/b"},
		{"no topology", map[string]string{"ns/a": ""}, "", "no ClusterClass: ns/a"},
	}
	for _, tt := range tests {
		class, why := OneClass(tt.classOf)
		if class != tt.class || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
			t.Errorf("%s: OneClass = %q, %q; want %q, %q", tt.name, class, why, tt.class, tt.why)
		}
	}
}

func TestResolveClassRevision(t *testing.T) {
	recorded := []revision.Recorded{{Name: "gold-2", Revision: 2}, {Name: "gold-10", Revision: 10}, {Name: "gold-3", Revision: 3}}
	tests := []struct {
		name          string
		classRevision string
		on            bool
		recorded      []revision.Recorded
		n             int64
		why           string
	}{
		{"latest", "latest", true, recorded, 10, ""},
		{"a number recorded", "3", true, recorded, 3, ""},
		{"a number not recorded", "4", true, recorded, 0, "no revision 4 (no ClusterClassRevision gold-4; recorded: 2, 3, 10)"},
		{"latest of none", "latest", true, nil, 0, "no revision recorded yet"},
		{"a number of none", "1", true, nil, 0, "recorded: none"},
		{"not opted in", "latest", false, recorded, 0, "has not opted in"},
	}
	for _, tt := range tests {
		n, why := ResolveClassRevision(tt.classRevision, "ns/gold", tt.on, tt.recorded)
		if n != tt.n || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
			t.Errorf("%s: = %d, %q; want %d, %q", tt.name, n, why, tt.n, tt.why)
		}
	}
}

package validation

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

func errorStrings(t *testing.T, errs interface{ Error() string }) string {
	t.Helper()
	if errs == nil {
		return ""
	}
	return errs.Error()
}

// TestKubernetesVersions_validateKubernetesVersions follows Cluster API v1.14.2's ClusterClass
// webhook (package admission, validateKubernetesVersions: lenient versions, ascending, no minor
// skipped, paths spec.kubernetesVersion[i] as it reports them) and the CRD markers on
// ClusterClassSpec.KubernetesVersions (api module: at most 100 items of 1 to 256 characters).
func TestKubernetesVersions_validateKubernetesVersions(t *testing.T) {
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("v1.31.%d", i)
	}
	for _, tc := range []struct {
		name     string
		versions []string
		want     string // the aggregate error; "" means accepted
	}{
		{"one per minor", []string{"v1.30.4", "v1.31.2", "v1.32.0"}, ""},
		{"several patches of a minor", []string{"v1.30.4", "v1.30.5", "v1.31.0", "v1.31.2"}, ""},
		{"a minor skipped", []string{"v1.30.4", "v1.32.0"},
			`spec.kubernetesVersion[1]: Invalid value: "v1.32.0": expecting a version with minor 30 or 31, found version 1.32.0`},
		{"a duplicate", []string{"v1.31.2", "v1.31.2"},
			`spec.kubernetesVersion[1]: Invalid value: "v1.31.2": version must be greater than v1.31.2`},
		{"descending", []string{"v1.31.2", "v1.30.4"},
			`[spec.kubernetesVersion[1]: Invalid value: "v1.30.4": version must be greater than v1.31.2, spec.kubernetesVersion[1]: Invalid value: "v1.30.4": expecting a version with minor 31 or 32, found version 1.30.4]`},
		{"a pre-release before its release", []string{"v1.31.0-rc.1", "v1.31.0"}, ""},
		{"build metadata that cannot be ordered is tolerated", []string{"v1.31.2+abc", "v1.31.2+def"}, ""},
		{"numeric build metadata ascending", []string{"v1.31.2+1", "v1.31.2+2"}, ""},
		{"numeric build metadata descending", []string{"v1.31.2+2", "v1.31.2+1"},
			`spec.kubernetesVersion[1]: Invalid value: "v1.31.2+1": version must be greater than v1.31.2+2`},
		{"read leniently, as ParseTolerant does", []string{"1.31", "v1.32"}, ""},
		{"not a version", []string{"v1.30.4", "v1.31.x"}, `spec.kubernetesVersion[1]: Invalid value: "v1.31.x": version must be a valid semantic version`},
		{"an empty entry (CRD minLength)", []string{""},
			`spec.kubernetesVersions[0]: Invalid value: "": spec.kubernetesVersions[0] in body should be at least 1 chars long`},
		{"at most 100 (CRD maxItems)", many, "spec.kubernetesVersions: Too many: 101: must have at most 100 items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kubernetesVersions(tc.versions)
			assert.Equal(t, tc.want, errorStrings(t, got.ToAggregate()))
			class, _ := sample(t)
			class.Spec.KubernetesVersions = tc.versions
			assert.Equal(t, tc.want == "", len(ClusterClass(class, nil, nil)) == 0, "ClusterClass applies the rule")
		})
	}
}

// TestKubernetesVersions_validateKubernetesVersionsOfClusters follows Cluster API v1.14.2's
// ClusterClass webhook (package admission, ClusterClass.validateKubernetesVersionsOfClusters): an
// update listing versions must keep every version its Clusters run.
func TestKubernetesVersions_validateKubernetesVersionsOfClusters(t *testing.T) {
	old, cluster := sample(t)
	for _, tc := range []struct {
		versions []string
		want     string
	}{
		{nil, ""},
		{[]string{"v1.31.2", "v1.32.4"}, ""},
		{[]string{"v1.31.3", "v1.32.4"}, `spec.kubernetesVersions: Forbidden: Kubernetes Version v1.31.2 is used by Cluster "demo" but not set in ClusterClass`},
	} {
		class := old.DeepCopy()
		class.Spec.KubernetesVersions = tc.versions
		assert.Equal(t, tc.want, errorStrings(t, ClusterClass(class, old, []clusterv1.Cluster{*cluster}).ToAggregate()), "%v", tc.versions)
	}
}

// TestChainStep follows the steps of Cluster API v1.14.2's chained upgrade plan (package
// desiredstate, GetUpgradePlanFromClusterClassVersions): the last listed release of every minor
// between the control plane's and the target's.
func TestChainStep(t *testing.T) {
	list := []string{"v1.31.2", "v1.32.3", "v1.32.4", "v1.33.0", "v1.33.1", "v1.34.1"}
	for _, tc := range []struct {
		version, target string
		want            bool
	}{
		{"v1.32.4", "v1.34.1", true},
		{"v1.33.1", "v1.34.1", true},
		{"v1.32.3", "v1.34.1", false}, // v1.32.4 is the step of minor 32
		{"v1.33.0", "v1.33.1", false}, // the target's minor: the plan goes straight to it
		{"v1.34.1", "v1.34.1", false}, // the target itself
		{"v1.30.0", "v1.34.1", false}, // not listed
		{"v1.32.4", "v1.31.2", false}, // above the target
	} {
		assert.Equal(t, tc.want, chainStep(tc.version, tc.target, list), "%s towards %s", tc.version, tc.target)
	}
}

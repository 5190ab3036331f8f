package validation

import (
	"fmt"
	"strconv"
	"strings"

	blang "github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The CRD bounds of a ClusterClass's spec.kubernetesVersions (Cluster API's kubebuilder markers
// on ClusterClassSpec.KubernetesVersions).
const (
	maxKubernetesVersions      = 100
	maxKubernetesVersionLength = 256
)

// tolerantVersion reads a version the lenient way Cluster API's webhooks do (semver.ParseTolerant:
// an optional "v", missing minor or patch taken as 0), so a list the webhooks accept is accepted
// here too.
func tolerantVersion(v string) (blang.Version, error) {
	return blang.ParseTolerant(v)
}

// sameVersion says two version strings name the same version once read leniently; unreadable
// strings are the same only when equal.
func sameVersion(a, b string) bool {
	va, errA := tolerantVersion(a)
	vb, errB := tolerantVersion(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return va.String() == vb.String()
}

// compareWithBuild orders two versions as Cluster API does when build metadata counts
// (version.Compare with WithBuildTags): -1, 0 or 1, or 2 when both differ only in build
// identifiers that cannot be ordered (two different words, such as commit hashes). Equal versions
// with build metadata are ordered identifier by identifier: numbers by value and below words, and
// the longer list above its prefix.
func compareWithBuild(a, b blang.Version) int {
	if c := a.Compare(b); c != 0 {
		return c
	}
	for i := 0; i < len(a.Build) && i < len(b.Build); i++ {
		if c := compareBuildIdentifier(a.Build[i], b.Build[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a.Build) == len(b.Build):
		return 0
	case len(a.Build) < len(b.Build):
		return -1
	}
	return 1
}

func compareBuildIdentifier(a, b string) int {
	numA, numB := isDigits(a), isDigits(b)
	na, _ := strconv.ParseUint(a, 10, 64) // digits beyond uint64 read as its maximum, still a number
	nb, _ := strconv.ParseUint(b, 10, 64)
	switch {
	case numA && !numB:
		return -1
	case !numA && numB:
		return 1
	case numA && numB:
		switch {
		case na < nb:
			return -1
		case na > nb:
			return 1
		}
		return 0
	case a == b:
		return 0
	}
	return 2
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// withoutPre drops the pre-release part: Cluster API's version rules for a Cluster's upgrade
// (version.WithoutPreReleases) treat v1.32.0-rc.1 as v1.32.0.
func withoutPre(v blang.Version) blang.Version {
	v.Pre = nil
	return v
}

// kubernetesVersions checks a ClusterClass's spec.kubernetesVersions. First the CRD's bounds (at
// most 100 entries of 1 to 256 characters); an object breaking them never reaches the webhook,
// so the webhook's rules are checked only without such errors. The webhook's rules (Cluster
// API's webhooks validateKubernetesVersions) are that every entry is a version, each greater than
// the one before (entries equal but for build metadata that cannot be ordered are tolerated), and
// no minor is skipped: the next entry has the same minor or the one after, so a Cluster can be
// upgraded across several minors by chaining through the list. Those errors name
// spec.kubernetesVersion[i], singular, as Cluster API reports them.
func kubernetesVersions(vs []string) field.ErrorList {
	if errs := kubernetesVersionsSchema(vs); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "kubernetesVersion")
	var prev *blang.Version
	for i, v := range vs {
		sv, err := tolerantVersion(v)
		if err != nil {
			errs = append(errs, field.Invalid(p.Index(i), v, "version must be a valid semantic version"))
			continue
		}
		if prev != nil {
			errs = append(errs, versionFollows(sv, *prev, v, p.Index(i))...)
		}
		prev = &sv
	}
	return errs
}

// versionFollows: a list entry is greater than the one before it and on the same or the next minor.
func versionFollows(sv, prev blang.Version, raw string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if compareWithBuild(sv, prev) <= 0 {
		errs = append(errs, field.Invalid(p, raw, fmt.Sprintf("version must be greater than v%s", prev)))
	}
	if sv.Minor != prev.Minor && sv.Minor != prev.Minor+1 {
		errs = append(errs, field.Invalid(p, raw, fmt.Sprintf("expecting a version with minor %d or %d, found version %s", prev.Minor, prev.Minor+1, sv)))
	}
	return errs
}

// kubernetesVersionsSchema: the CRD's bounds on spec.kubernetesVersions, worded as the API server
// words them.
func kubernetesVersionsSchema(vs []string) field.ErrorList {
	p := field.NewPath("spec", "kubernetesVersions")
	if len(vs) > maxKubernetesVersions {
		return field.ErrorList{field.TooMany(p, len(vs), maxKubernetesVersions)}
	}
	var errs field.ErrorList
	for i, v := range vs {
		switch {
		case v == "":
			errs = append(errs, field.Invalid(p.Index(i), v, p.Index(i).String()+" in body should be at least 1 chars long"))
		case len(v) > maxKubernetesVersionLength:
			errs = append(errs, field.TooLong(p.Index(i), v, maxKubernetesVersionLength))
		}
	}
	return errs
}

// chainStep says whether version is a step an upgrade chained through the class's
// kubernetesVersions passes on its way to target, target excluded. Cluster API's plan
// (GetUpgradePlanFromClusterClassVersions) goes through the last listed version of every minor
// between the control plane's and the target's, so those are the steps.
func chainStep(version, target string, list []string) bool {
	v, errV := tolerantVersion(version)
	t, errT := tolerantVersion(target)
	if errV != nil || errT != nil || v.Minor >= t.Minor || v.Major != t.Major {
		return false
	}
	listed := false
	for _, entry := range list {
		e, err := tolerantVersion(entry)
		if err != nil || e.Major != v.Major || e.Minor != v.Minor || compareWithBuild(e, t) == 1 {
			continue
		}
		if e.String() == v.String() {
			listed = true
		} else if e.GT(v) {
			return false // a later release of the same minor is the step, not this one
		}
	}
	return listed
}

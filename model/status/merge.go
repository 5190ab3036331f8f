package status

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The rules by which Cluster API v1.14 (util/conditions) derives one v1beta2 condition from
// others: a summary of an object's own conditions (NewSummaryCondition, used for Available) and
// an aggregate of one condition type over many objects (NewAggregateCondition, used for
// WorkersAvailable, RollingOut, ScalingUp, ScalingDown), both merged by its default merge
// strategy (DefaultMergeStrategy). Restated here: topoflow depends only on Cluster API's API module.

// notYetReported is the reason of a condition an object has not reported (conditions.NotYetReportedReason).
const notYetReported = "NotYetReported"

// noReasonReported replaces the empty reason of a v1beta1 condition read as a v1beta2 one
// (conditions.NoReasonReported).
const noReasonReported = "NoReasonReported"

// priority orders conditions in a merge: issues first, then unknowns, then the rest.
type priority int

const (
	issuePriority priority = iota
	unknownPriority
	infoPriority
)

type priorityFunc func(metav1.Condition) priority

// polarityPriority is conditions.GetDefaultMergePriorityFunc: False is an issue, True is info,
// the other way round for the negative-polarity types given.
func polarityPriority(negative ...string) priorityFunc {
	return func(c metav1.Condition) priority {
		neg := slices.Contains(negative, c.Type)
		switch c.Status {
		case metav1.ConditionTrue:
			if neg {
				return issuePriority
			}
			return infoPriority
		case metav1.ConditionFalse:
			if neg {
				return infoPriority
			}
			return issuePriority
		}
		return unknownPriority
	}
}

// mergeReasons are the merged condition's reasons when issues, unknowns or only infos were found
// (conditions.GetDefaultComputeMergeReasonFunc).
type mergeReasons struct{ issue, unknown, info string }

// reported is a condition with the kind and name of the object that reports it.
type reported struct {
	kind, name string
	metav1.Condition
}

// merged is the status and reason of a merge (DefaultMergeStrategy.Merge), with the conditions
// split by priority in the order given.
func merged(conds []reported, prio priorityFunc, positive bool, r mergeReasons) (st metav1.ConditionStatus, reason string, issues, unknowns, infos []reported) {
	for _, c := range conds {
		switch prio(c.Condition) {
		case issuePriority:
			issues = append(issues, c)
		case unknownPriority:
			unknowns = append(unknowns, c)
		default:
			infos = append(infos, c)
		}
	}
	yes, no := metav1.ConditionTrue, metav1.ConditionFalse
	if !positive {
		yes, no = no, yes
	}
	switch {
	case len(issues) > 0:
		return no, r.issue, issues, unknowns, infos
	case len(unknowns) > 0:
		return metav1.ConditionUnknown, r.unknown, issues, unknowns, infos
	}
	return yes, r.info, issues, unknowns, infos
}

// summarize follows conditions.NewSummaryCondition: the conditions of types (in that order) among
// conds are merged into one of type target; a type missing from conds counts as Unknown, not yet
// reported, unless it is in ignoreIfMissing. Its message lists, one "* Type: ..." line each, the
// conditions that are not info, or, when the result is True, the info ones with a message.
func summarize(target string, conds []metav1.Condition, types, ignoreIfMissing []string, prio priorityFunc, r mergeReasons) metav1.Condition {
	var in []reported
	for _, t := range types {
		i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == t })
		switch {
		case i >= 0:
			in = append(in, reported{Condition: conds[i]})
		case !slices.Contains(ignoreIfMissing, t):
			in = append(in, reported{Condition: metav1.Condition{Type: t, Status: metav1.ConditionUnknown,
				Reason: notYetReported, Message: "Condition not yet reported"}})
		}
	}
	st, reason, _, _, _ := merged(in, prio, true, r)
	var lines []string
	for _, c := range in {
		if prio(c.Condition) == infoPriority && (st != metav1.ConditionTrue || c.Message == "") {
			continue
		}
		line := "* " + c.Type + ":"
		if c.Message != "" {
			line += indentIfMultiline(c.Message)
		} else {
			line += " " + c.Reason
		}
		lines = append(lines, line)
	}
	return metav1.Condition{Type: target, Status: st, Reason: reason, Message: strings.Join(lines, "\n")}
}

// aggregate follows conditions.NewAggregateCondition: the condition of type source of each of
// objs (Unknown, not yet reported, when an object has none) merged into one of type target. Its
// message names the objects by kind, grouped by message, issues and unknowns first, at most three
// lines and one "And n ..." line per kind for the rest; info messages only when all are info.
func aggregate(target, source string, objs []reported, positive bool, prio priorityFunc, r mergeReasons) metav1.Condition {
	in := make([]reported, 0, len(objs))
	for _, o := range objs {
		if o.Type == "" {
			o.Condition = metav1.Condition{Type: source, Status: metav1.ConditionUnknown, Reason: notYetReported,
				Message: fmt.Sprintf("Condition %s not yet reported", source)}
		}
		in = append(in, o)
	}
	st, reason, issues, unknowns, infos := merged(in, prio, positive, r)
	n := 3
	var lines []string
	if len(issues)+len(unknowns) > 0 {
		lines = aggregateLines(append(issues, unknowns...), &n, false, prio,
			map[priority]string{issuePriority: "with other issues", unknownPriority: "with status unknown"})
	} else {
		lines = aggregateLines(infos, &n, true, prio, map[priority]string{infoPriority: "with additional info"})
	}
	return metav1.Condition{Type: target, Status: st, Reason: reason, Message: strings.Join(lines, "\n")}
}

// aggregateLines is the message part of an aggregate (the merge strategy's aggregateMessages).
func aggregateLines(conds []reported, n *int, dropEmpty bool, prio priorityFunc, others map[priority]string) []string {
	byKind := map[string]map[string][]string{}
	msgPrio := map[string]priority{}
	for _, c := range conds {
		if dropEmpty && c.Message == "" {
			continue
		}
		if byKind[c.kind] == nil {
			byKind[c.kind] = map[string][]string{}
		}
		byKind[c.kind][c.Message] = append(byKind[c.kind][c.Message], c.name)
		// A message takes the most severe priority of the conditions that carry it.
		if cur, ok := msgPrio[c.Message]; !ok || prio(c.Condition) < cur {
			msgPrio[c.Message] = prio(c.Condition)
		}
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var lines []string
	for _, kind := range kinds {
		msgs := byKind[kind]
		order := make([]string, 0, len(msgs))
		for m, names := range msgs {
			sort.Strings(names)
			order = append(order, m)
		}
		sort.SliceStable(order, func(i, j int) bool {
			a, b := order[i], order[j]
			if msgPrio[a] != msgPrio[b] {
				return msgPrio[a] < msgPrio[b]
			}
			if len(msgs[a]) != len(msgs[b]) {
				return len(msgs[a]) > len(msgs[b])
			}
			return strings.Join(msgs[a], ",") < strings.Join(msgs[b], ",")
		})
		rest := map[priority]int{}
		for _, m := range order {
			names := msgs[m]
			if *n == 0 {
				rest[msgPrio[m]] += len(names)
				continue
			}
			var line string
			switch {
			case len(names) == 1:
				line = fmt.Sprintf("* %s %s:", kind, names[0])
			case len(names) <= 3:
				line = fmt.Sprintf("* %s %s:", plural(kind), strings.Join(names, ", "))
			default:
				line = fmt.Sprintf("* %s %s, ... (%d more):", plural(kind), strings.Join(names[:3], ", "), len(names)-3)
			}
			lines = append(lines, line+indentIfMultiline(m))
			*n--
		}
		for _, p := range []priority{issuePriority, unknownPriority, infoPriority} {
			count, what := rest[p], others[p]
			if count == 0 || what == "" {
				continue
			}
			k := kind
			if count > 1 {
				k = plural(kind)
			}
			lines = append(lines, fmt.Sprintf("And %d %s %s", count, k, what))
		}
	}
	return lines
}

// plural is the English plural of a kind name, for the kinds that appear in Cluster conditions.
func plural(kind string) string {
	lower := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return kind + "es"
	case strings.HasSuffix(lower, "y") && len(lower) > 1 && !strings.ContainsAny(lower[len(lower)-2:len(lower)-1], "aeiou"):
		return kind[:len(kind)-1] + "ies"
	}
	return kind + "s"
}

var bullet = regexp.MustCompile(`\s*\*\s+`)

// indentIfMultiline puts a message after "* Name:": on the same line when it is one line without
// a bullet, otherwise on the lines below, indented, each line made a bullet unless all are.
func indentIfMultiline(m string) string {
	if !strings.Contains(m, "\n") && !bullet.MatchString(m) {
		return " " + m
	}
	lines := strings.Split(m, "\n")
	allBullets := true
	for _, l := range lines {
		if !bullet.MatchString(l) {
			allBullets = false
			break
		}
	}
	for i, l := range lines {
		prefix := "  "
		if !allBullets {
			if bullet.MatchString(l) {
				prefix += "  "
			} else {
				prefix += "* "
			}
		}
		lines[i] = prefix + l
	}
	return "\n" + strings.Join(lines, "\n")
}

package upgrade

import "slices"

// Decision is what the versions and the hooks make of one pass: the versions each part runs now
// (Result, rewritten by Hold), the hook holding the next move and the version it is about, the
// hook the Cluster waits for, and the hooks that passed on the way without a call.
type Decision struct {
	Result              *Result
	HeldBy, HeldVersion string
	// Owed is the hook the Cluster waits for (nil: none).
	Owed *Due
	// Passed are the hooks owed on the way that no extension handles (Decide's unhandled), in the
	// order they passed; each is recorded in the ledger.
	Passed []Due
}

// Decide computes the versions (Compute), holds the moves the ledger has not allowed (Hold) and
// names the hook owed (Owed). An owed hook in unhandled (no extension handles it, and its call has
// nothing else to do) passes without a call: it is recorded in l and the decision is made again,
// as Cluster API's reconcile goes on when a hook has no handler (its call answers at once and the
// hook is marked done). A nil ledger holds nothing and owes nothing.
func (l *Ledger) Decide(in Input, unhandled []string) (*Decision, error) {
	d := &Decision{}
	for {
		res, err := Compute(in)
		if err != nil {
			return nil, err
		}
		d.Result = res
		d.HeldBy, d.HeldVersion = l.Hold(in, res)
		d.Owed = l.Owed(in, res, d.HeldBy, d.HeldVersion)
		if d.Owed == nil || !slices.Contains(unhandled, d.Owed.Hook) || passedBefore(d.Passed, *d.Owed) {
			return d, nil
		}
		d.Passed = append(d.Passed, *d.Owed)
		l.Record(*d.Owed)
	}
}

// passedBefore says a hook is owed again for the same versions after it passed in this decision:
// the ledger did not move on (it cannot, but the loop must end).
func passedBefore(passed []Due, due Due) bool {
	return slices.ContainsFunc(passed, func(p Due) bool {
		return p.Hook == due.Hook && p.From == due.From && p.To == due.To && p.Version == due.Version
	})
}

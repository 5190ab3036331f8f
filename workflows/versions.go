package workflows

// Versioning running workflows.
//
// A Cluster's workflow runs for the Cluster's whole life, continuing as new every few hundred
// passes (Timing.PassesBeforeContinueAsNew) or when Temporal suggests it; an upgrade's child does
// the same. A worker with new workflow code therefore replays histories that older code
// recorded. The rule:
//
//   - Before a release, change the workflows freely, and record fresh histories for
//     TestReplayRecordedHistories (testdata/histories) in the same change. A stack that still runs
//     workflows from before needs `make purge` (docs/running.md says so).
//   - After a release, a change that alters the commands a workflow issues (activities, timers,
//     child workflows, signals, markers) is guarded with workflow.GetVersion(ctx, "<change>",
//     workflow.DefaultVersion, 1), listed below with the date it was released, and histories
//     recorded with the old code stay in testdata next to new ones.
//   - A branch can go once no run that took it can still be replayed: every run continues as new
//     within Timing.Resync × PassesBeforeContinueAsNew (about 33 hours at the defaults), and an
//     upgrade child within its own pass budget, so after the release that carries the change has
//     run everywhere for longer than that, plus the longest a hook may block an upgrade. Remove the
//     GetVersion call with its old branch, and the histories that only the old branch replays.
//
// Changes guarded now (name, released, may go after):
//
//	(none: topoflow has not been released; the pre-release branches were dropped in #20)

// Package adapt hands the packages on the hub (model/api/v1beta2, issue #37) the hub form of the
// typed v1beta1 values their last v1beta1 callers still hold: the admission webhooks' requests and
// the validation adapters they call (model/validation/v1beta1.go), the ClusterClass status and
// revision recorder, the Rollouts' Clusters, and ExtensionConfig conditions. Each function converts
// a v1beta1 value right before the call (and, where the caller keeps using the result, converts
// the answer back). When a caller is ported, its adapter call is deleted; when no caller is left,
// so is this package.
//
// The rules are Cluster API v1.14's conversion from v1beta1 to v1beta2 (core/v1beta1's
// conversion.go and zz_generated.conversion.go, with what its conversion webhook adds:
// core/webhooks/conversion), restated in plain Go on topoflow's own types. The tests hold the
// conversions against that conversion as model/api/conversion runs it, on the repository's
// documents and on random objects. Two of its rules matter to the model:
//
//   - A v1beta1 boolean v1beta2 holds as a pointer becomes a pointer to true when true and nil
//     when false (Convert_bool_To_Pointer_bool with no conversion data); the few Cluster API
//     converts with the generated code alone (a variable's required, a status replica count)
//     are always a pointer.
//   - A duration becomes whole seconds (ConvertToSeconds: truncated, capped at MaxInt32).
//
// The conversion data (conversion.DataAnnotation) an object served as v1beta1 may carry is left in
// its annotations, not read: what it restores is an explicit false where v1beta2 holds a pointer,
// which the model reads as unset.
//
// The hub values share what they can with the v1beta1 values (maps, lists of plain values, JSON
// bytes), as Cluster API's generated conversion does: callers treat them as read-only.
package adapt

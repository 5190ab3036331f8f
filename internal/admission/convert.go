package admission

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// PathConvert is where the conversion webhook of the Cluster and ClusterClass CRDs is served
// (Cluster API's path).
const PathConvert = "/convert"

var (
	v1beta1APIVersion = clusterv1.GroupVersion.String()
	v1beta2APIVersion = conversion.V1Beta2GroupVersion.String()
)

// convert answers a ConversionReview: every object in the desired version, converted as Cluster
// API's conversion webhook converts it (model/api/conversion). One object that cannot be
// converted fails the whole review, naming it; the API server then reports the error to its
// caller and converts nothing.
func (s *Server) convert(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a ConversionReview", http.StatusMethodNotAllowed)
		return
	}
	var in apiextensionsv1.ConversionReview
	if err := json.NewDecoder(io.LimitReader(r.Body, 32<<20)).Decode(&in); err != nil || in.Request == nil {
		http.Error(w, "not a ConversionReview", http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: in.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, obj := range in.Request.Objects {
		out, err := s.convertOne(obj.Raw, in.Request.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			if s.Log != nil {
				s.Log.WarnContext(r.Context(), "conversion refused", "desiredAPIVersion", in.Request.DesiredAPIVersion, "error", err)
			}
			break
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"}, Response: resp})
}

// convertOne converts one Cluster or ClusterClass to apiVersion.
func (s *Server) convertOne(raw []byte, apiVersion string) ([]byte, error) {
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        struct{ Namespace, Name string } `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("decoding an object to convert: %w", err)
	}
	if head.APIVersion == apiVersion {
		return raw, nil
	}
	versionOf := s.Versions
	if versionOf == nil {
		versionOf = func(group, kind string) (string, error) {
			return "", fmt.Errorf("no API discovery to name the version of %s in %s", kind, group)
		}
	}
	var out map[string]any
	var err error
	switch {
	case head.Kind == "Cluster" && head.APIVersion == v1beta1APIVersion && apiVersion == v1beta2APIVersion:
		out, err = conversion.ClusterV1Beta2(raw)
	case head.Kind == "Cluster" && head.APIVersion == v1beta2APIVersion && apiVersion == v1beta1APIVersion:
		out, err = conversion.ClusterV1Beta1(raw, versionOf)
	case head.Kind == "ClusterClass" && head.APIVersion == v1beta1APIVersion && apiVersion == v1beta2APIVersion:
		out, err = conversion.ClusterClassV1Beta2(raw)
	case head.Kind == "ClusterClass" && head.APIVersion == v1beta2APIVersion && apiVersion == v1beta1APIVersion:
		out, err = conversion.ClusterClassV1Beta1(raw)
	default:
		return nil, fmt.Errorf("%s %s/%s: cannot convert %s to %s", head.Kind, head.Metadata.Namespace, head.Metadata.Name, head.APIVersion, apiVersion)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

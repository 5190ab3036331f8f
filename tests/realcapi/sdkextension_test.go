//go:build realcapi

package realcapi

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/selfsigned"
	"github.com/topoflow/topoflow/tests/stacktest"
)

// sdkCall is one request as the extension built on Cluster API's SDK decoded it
// (tests/realcapi/sdkextension Call).
type sdkCall struct {
	Hook                 string   `json:"hook"`
	Cluster              string   `json:"cluster"`
	ClusterAPIVersion    string   `json:"clusterAPIVersion"`
	ClassRef             string   `json:"classRef"`
	TopologyVersion      string   `json:"topologyVersion"`
	InfrastructureRef    string   `json:"infrastructureRef"`
	ControlPlaneRef      string   `json:"controlPlaneRef"`
	HasStatus            bool     `json:"hasStatus"`
	Version              string   `json:"version"`
	FromVersion          string   `json:"fromVersion"`
	ControlPlaneUpgrades []string `json:"controlPlaneUpgrades"`
	WorkersUpgrades      []string `json:"workersUpgrades"`
	RetryAfterSeconds    int32    `json:"retryAfterSeconds"`
}

// Passed says the answer let the step go on.
func (c sdkCall) Passed() bool { return c.RetryAfterSeconds == 0 }

// sdkExtension is the Runtime Extension built on Cluster API v1.14.2's Runtime SDK
// (deploy/capi/build.sh builds it into bin/capi-sdk-extension), run as a process of its own.
type sdkExtension struct {
	url    string
	ca     []byte
	client *http.Client
}

// startSDKExtension runs the extension on a free local port with a fresh serving certificate.
func startSDKExtension(t *testing.T) *sdkExtension {
	t.Helper()
	bin := repoFile("bin/capi-sdk-extension")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: the extension built on Cluster API's SDK is built by deploy/capi/build.sh (tests/capi.sh runs it)", err)
	}
	dir := t.TempDir()
	ca, err := selfsigned.WriteDir(filepath.Join(dir, "certs"), "127.0.0.1")
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	logFile, err := os.Create(filepath.Join(dir, "extension.log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--cert-dir", filepath.Join(dir, "certs"),
		"--retry-after", "2", "--block-delete-for", "10s",
		"--block-first", "BeforeClusterCreate,BeforeClusterUpgrade,BeforeControlPlaneUpgrade,BeforeWorkersUpgrade")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			keepLog(t, logFile.Name())
		}
	})

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	e := &sdkExtension{url: fmt.Sprintf("https://127.0.0.1:%d", port), ca: ca,
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	stacktest.WaitFor(t, 30*time.Second, "the SDK extension serving", func() (bool, string) {
		if _, err := e.calls(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return e
}

// keepLog copies the extension's log beside the stack's logs (kept after the run) and names it,
// rather than printing it: the assertions that failed stay the last lines of the test's output,
// where CI's excerpt shows them.
func keepLog(t *testing.T, path string) {
	dir := os.Getenv("TOPOFLOW_STACK_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Logf("reading the extension log: %v", err)
		return
	}
	dst := filepath.Join(dir, "sdk-extension-"+t.Name()+".log")
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Logf("keeping the extension log: %v", err)
		return
	}
	t.Logf("extension log: %s", dst)
}

func (e *sdkExtension) calls() ([]sdkCall, error) {
	resp, err := e.client.Get(e.url + "/calls")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /calls: HTTP %d", resp.StatusCode)
	}
	var out []sdkCall
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// Calls are the calls of hook so far ("" for all), in order.
func (e *sdkExtension) Calls(t *testing.T, hook string) []sdkCall {
	t.Helper()
	all, err := e.calls()
	require.NoError(t, err)
	var out []sdkCall
	for _, c := range all {
		if hook == "" || c.Hook == hook {
			out = append(out, c)
		}
	}
	return out
}

// Config is an ExtensionConfig for the extension, selecting namespaces labelled key=value.
func (e *sdkExtension) Config(name, key, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"clientConfig":      map[string]any{"url": e.url, "caBundle": base64.StdEncoding.EncodeToString(e.ca)},
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{key: value}},
		},
	}}
}

// key names a call in the hook order: the hook, with its version when it has one.
func (c sdkCall) key() string {
	if c.Version == "" {
		return c.Hook
	}
	return c.Hook + "(" + c.Version + ")"
}

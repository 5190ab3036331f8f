package selfsigned

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNew: the serving certificate verifies against the CA for its IP and DNS names only.
func TestNew(t *testing.T) {
	p, err := New("127.0.0.1", "localhost")
	require.NoError(t, err)
	cert, err := p.TLS()
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(p.CA))
	for _, host := range []string{"127.0.0.1", "localhost"} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
		assert.NoError(t, err, host)
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "example.com"})
	assert.Error(t, err)
}

// TestWriteDir: files are written once; a second call keeps them and returns the same CA.
func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	ca, err := WriteDir(dir, "127.0.0.1")
	require.NoError(t, err)
	crt, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	require.NoError(t, err)
	again, err := WriteDir(dir, "127.0.0.1")
	require.NoError(t, err)
	assert.Equal(t, ca, again)
	crt2, _ := os.ReadFile(filepath.Join(dir, "tls.crt"))
	assert.Equal(t, crt, crt2, "kept")
}

package runtimeext

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/internal/selfsigned"
)

// TestClientCertificate: an extension that requires a client certificate (mutual TLS) is
// reached once one is configured, and a rotated certificate is picked up without a restart.
func TestClientCertificate(t *testing.T) {
	server, err := selfsigned.New("127.0.0.1")
	require.NoError(t, err)
	serving, err := server.TLS()
	require.NoError(t, err)
	// Clients are trusted when a second CA signed them.
	client1, err := selfsigned.New("topoflow")
	require.NoError(t, err)
	client2, err := selfsigned.New("topoflow")
	require.NoError(t, err)
	trusted := x509.NewCertPool()
	require.True(t, trusted.AppendCertsFromPEM(client1.CA))
	require.True(t, trusted.AppendCertsFromPEM(client2.CA))
	var served atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: trusted, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()

	get := func() error {
		c, err := newHTTPClient(server.CA)
		require.NoError(t, err)
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	defer clientCert.Store(nil)
	clientCert.Store(nil)
	assert.Error(t, get(), "no client certificate: the handshake fails")

	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	assert.ErrorContains(t, UseClientCertificate(certFile, keyFile), "no such file", "a missing file fails at start")
	require.NoError(t, os.WriteFile(certFile, client1.Cert, 0o600))
	require.NoError(t, os.WriteFile(keyFile, client1.Key, 0o600))
	require.NoError(t, UseClientCertificate(certFile, keyFile))
	require.NoError(t, get())

	// Rotated in place (a later modification time): the next handshake presents the new one.
	require.NoError(t, os.WriteFile(certFile, client2.Cert, 0o600))
	require.NoError(t, os.WriteFile(keyFile, client2.Key, 0o600))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(certFile, later, later))
	require.NoError(t, os.Chtimes(keyFile, later, later))
	require.NoError(t, get())
	f := clientCert.Load()
	require.NotNil(t, f)
	loaded, err := f.get()
	require.NoError(t, err)
	want, err := tls.X509KeyPair(client2.Cert, client2.Key)
	require.NoError(t, err)
	assert.Equal(t, want.Certificate[0], loaded.Certificate[0], "the rotated certificate")
	assert.EqualValues(t, 2, served.Load(), "two calls got through")
}

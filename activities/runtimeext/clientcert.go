package runtimeext

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Mutual TLS to Runtime Extensions (Cluster API v1.11, #12517): a client certificate presented
// to every extension that asks for one, read from files that may be rotated (cert-manager
// renews them in place); the worker's --runtime-extension-client-cert-file and -key-file, as
// Cluster API's controller flags.

// clientCert is the certificate source when one is configured (nil: none is presented).
var clientCert atomic.Pointer[certFiles]

// UseClientCertificate makes every call to a Runtime Extension present the certificate in
// certFile and keyFile (PEM). It reads them once now, so a bad pair fails the worker at start,
// and again whenever either file changes. Call it before the first call.
func UseClientCertificate(certFile, keyFile string) error {
	f := &certFiles{cert: certFile, key: keyFile}
	if _, err := f.get(); err != nil {
		return err
	}
	clientCert.Store(f)
	return nil
}

// certFiles loads a key pair from files, again when their modification times change.
type certFiles struct {
	cert, key string

	mu      sync.Mutex
	loaded  *tls.Certificate
	certMod time.Time
	keyMod  time.Time
}

func (f *certFiles) get() (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cm, err := modTime(f.cert)
	if err != nil {
		return nil, err
	}
	km, err := modTime(f.key)
	if err != nil {
		return nil, err
	}
	if f.loaded != nil && cm.Equal(f.certMod) && km.Equal(f.keyMod) {
		return f.loaded, nil
	}
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("runtime extension client certificate %s, key %s: %w", f.cert, f.key, err)
	}
	f.loaded, f.certMod, f.keyMod = &pair, cm, km
	return f.loaded, nil
}

func modTime(path string) (time.Time, error) {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("runtime extension client certificate: %w", err)
	}
	return st.ModTime(), nil
}

// withClientCertificate adds the configured client certificate, if any, to a TLS configuration.
func withClientCertificate(cfg *tls.Config) {
	f := clientCert.Load()
	if f == nil {
		return
	}
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return f.get() }
}

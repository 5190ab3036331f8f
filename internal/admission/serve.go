package admission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Serve serves h over TLS on addr until ctx ends. The certificate and key are certDir's tls.crt
// and tls.key (the layout of a Kubernetes TLS Secret mounted as a volume), read again when they
// change, so a rotated certificate is served without a restart.
func Serve(ctx context.Context, addr, certDir string, h http.Handler, log *slog.Logger) error {
	certs := &certFiles{cert: filepath.Join(certDir, "tls.crt"), key: filepath.Join(certDir, "tls.key")}
	if _, err := certs.get(nil); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("admission webhooks: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get},
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("admission webhooks serving", "address", ln.Addr().String(), "certDir", certDir)
	if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admission webhooks: %w", err)
	}
	return nil
}

// certFiles loads a certificate pair from files, again whenever the certificate file changes.
type certFiles struct {
	cert, key string
	mu        sync.Mutex
	modTime   time.Time
	current   *tls.Certificate
}

func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := os.Stat(c.cert)
	if err != nil {
		if c.current != nil {
			return c.current, nil // mid-rotation: keep serving the last one
		}
		return nil, fmt.Errorf("admission webhooks: serving certificate: %w", err)
	}
	if c.current != nil && st.ModTime().Equal(c.modTime) {
		return c.current, nil
	}
	pair, err := tls.LoadX509KeyPair(c.cert, c.key)
	if err != nil {
		if c.current != nil {
			return c.current, nil
		}
		return nil, fmt.Errorf("admission webhooks: serving certificate %s: %w", c.cert, err)
	}
	c.current, c.modTime = &pair, st.ModTime()
	return c.current, nil
}

// Package extension is a Runtime Extension server for tests: HTTPS with its own CA, a discovery
// endpoint, and hook handlers whose answers a test scripts per hook. It records every call.
package extension

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/selfsigned"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
)

// Answer is one scripted response to a hook call.
type Answer struct {
	Status            string
	RetryAfterSeconds int32
	Message           string
	// HTTPStatus, when not 0 or 200, answers with that HTTP error instead.
	HTTPStatus int
	// Delay holds the answer back, as a slow extension does.
	Delay time.Duration
}

// Call is one recorded call.
type Call struct {
	Hook, Handler, Cluster string
	At                     time.Time
	Settings               map[string]string
	// Body is the whole request.
	Body map[string]any
	// IdempotencyKey is the request's Idempotency-Key header.
	IdempotencyKey string
	// Status and RetryAfterSeconds are the answer sent; Late says it was sent after a delay
	// (Answer.Delay or SlowFor), Dropped that the connection was dropped instead (DownFor).
	Status            string
	RetryAfterSeconds int32
	Late, Dropped     bool
}

// Version is the Kubernetes version the call is about ("" for hooks without one).
func (c Call) Version() string {
	if v, _ := c.Body["kubernetesVersion"].(string); v != "" {
		return v
	}
	v, _ := c.Body["toKubernetesVersion"].(string)
	return v
}

// Passed says the call's answer let the step go on (and reached the caller in time).
func (c Call) Passed() bool {
	return !c.Late && !c.Dropped && c.Status == string(hooksv1.ResponseStatusSuccess) && c.RetryAfterSeconds == 0
}

// Server is a running test extension.
type Server struct {
	URL      string
	CABundle []byte

	srv     *httptest.Server
	mu      sync.Mutex
	hooks   []string
	answers map[string][]Answer
	blocked map[string]blockUntil
	respond map[string]Responder
	calls   []Call
	// discoveryFailure, when set, is the message of a Failure answer to discovery.
	discoveryFailure string
	// downUntil and slowUntil are fault windows (DownFor, SlowFor); slowDelay the delay then.
	downUntil, slowUntil time.Time
	slowDelay            time.Duration
	// blockFirst makes the first call of a hook per Cluster and version answer "retry"
	// (BlockFirstCall); firstSeen holds the keys already blocked.
	blockFirst map[string]blockFirst
	firstSeen  map[string]bool
}

type blockFirst struct {
	retryAfter int32
	message    string
}

// DownFor makes the server drop every connection for d, as a crashed extension does.
func (s *Server) DownFor(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.downUntil = time.Now().Add(d)
}

// SlowFor makes every answer wait delay for d (past the caller's timeout, when delay is longer).
func (s *Server) SlowFor(d, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowUntil, s.slowDelay = time.Now().Add(d), delay
}

// BlockFirstCall makes the first call of each hook per Cluster and version answer "retry in
// retryAfter seconds" with message; later calls answer as usual.
func (s *Server) BlockFirstCall(retryAfter int32, message string, hooks ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range hooks {
		s.blockFirst[h] = blockFirst{retryAfter: retryAfter, message: message}
	}
}

// Responder computes the hook-specific part of a successful answer (GeneratePatches items,
// DiscoverVariables variables) from the whole request.
type Responder func(request map[string]any) map[string]any

type blockUntil struct {
	until   time.Time
	message string
}

// Start serves handlers named "<hook lowercase>-handler" for the given hooks.
func Start(hooks ...string) (*Server, error) {
	caPEM, cert, err := certificates()
	if err != nil {
		return nil, err
	}
	s := &Server{CABundle: caPEM, hooks: hooks, answers: map[string][]Answer{}, blocked: map[string]blockUntil{}, respond: map[string]Responder{},
		blockFirst: map[string]blockFirst{}, firstSeen: map[string]bool{}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.srv.StartTLS()
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Script queues answers for a hook; once they are used up the hook answers Success.
func (s *Server) Script(hook string, answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[hook] = append(s.answers[hook], answers...)
}

// Respond sets the responder of a hook; its fields are added to every Success answer.
func (s *Server) Respond(hook string, r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond[hook] = r
}

// BlockFor makes a hook answer "retry" (with the seconds left, at least 1) until d has passed, as
// a real extension does while it is not ready; scripted answers come first.
func (s *Server) BlockFor(hook string, d time.Duration, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocked[hook] = blockUntil{until: time.Now().Add(d), message: message}
}

// FailDiscovery makes discovery answer Failure with the message ("" answers again).
func (s *Server) FailDiscovery(message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discoveryFailure = message
}

// SetHooks changes the hooks the server serves (what its next discovery reports).
func (s *Server) SetHooks(hooks ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = hooks
}

// Calls returns the recorded calls of a hook (all hooks when hook is empty).
func (s *Server) Calls(hook string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if hook == "" || c.Hook == hook {
			out = append(out, c)
		}
	}
	return out
}

func handlerName(hook string) string { return strings.ToLower(hook) + "-handler" }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	prefix := "/" + hooksv1.APIVersion + "/"
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, prefix) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/")
	raw, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var full map[string]any
	_ = json.Unmarshal(raw, &full)
	var body struct {
		Kind     string            `json:"kind"`
		Settings map[string]string `json:"settings"`
		Cluster  struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if parts[0] == "discovery" {
		resp := hooksv1.DiscoveryResponse{CommonResponse: hooksv1.CommonResponse{Status: hooksv1.ResponseStatusSuccess}}
		resp.APIVersion, resp.Kind = hooksv1.APIVersion, "DiscoveryResponse"
		s.mu.Lock()
		if s.discoveryFailure != "" {
			resp.Status, resp.Message = hooksv1.ResponseStatusFailure, s.discoveryFailure
			s.mu.Unlock()
			_ = json.NewEncoder(w).Encode(resp)
			return
		}
		for _, h := range s.hooks {
			timeout := int32(5)
			fp := runtimev1.FailurePolicyFail
			resp.Handlers = append(resp.Handlers, runtimev1.ExtensionHandler{
				Name: handlerName(h), RequestHook: runtimev1.GroupVersionHook{APIVersion: hooksv1.APIVersion, Hook: h},
				TimeoutSeconds: &timeout, FailurePolicy: &fp,
			})
		}
		s.mu.Unlock()
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	if len(parts) != 2 {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	hook := ""
	s.mu.Lock()
	for _, h := range s.hooks {
		if strings.ToLower(h) == parts[0] {
			hook = h
		}
	}
	if hook == "" || parts[1] != handlerName(hook) || body.Kind != hook+"Request" {
		s.mu.Unlock()
		http.Error(w, "unknown handler "+r.URL.Path+" for "+body.Kind, http.StatusNotFound)
		return
	}
	call := Call{Hook: hook, Handler: parts[1], Cluster: body.Cluster.Metadata.Namespace + "/" + body.Cluster.Metadata.Name, At: time.Now(), Settings: body.Settings, Body: full, IdempotencyKey: r.Header.Get("Idempotency-Key")}
	idx := len(s.calls)
	if time.Now().Before(s.downUntil) {
		call.Dropped = true
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		dropConnection(w)
		return
	}
	s.calls = append(s.calls, call)
	a := Answer{Status: string(hooksv1.ResponseStatusSuccess)}
	first := hook + "|" + call.Cluster + "|" + call.Version()
	if q := s.answers[hook]; len(q) > 0 {
		a, s.answers[hook] = q[0], q[1:]
	} else if b, ok := s.blocked[hook]; ok && time.Now().Before(b.until) {
		secs := int32(time.Until(b.until).Seconds() + 0.999)
		a = Answer{RetryAfterSeconds: max(secs, 1), Message: b.message}
	} else if b, ok := s.blockFirst[hook]; ok && !s.firstSeen[first] {
		s.firstSeen[first] = true
		a = Answer{RetryAfterSeconds: b.retryAfter, Message: b.message}
	}
	if time.Now().Before(s.slowUntil) {
		a.Delay = max(a.Delay, s.slowDelay)
	}
	if a.Status == "" {
		a.Status = string(hooksv1.ResponseStatusSuccess)
	}
	s.calls[idx].Status, s.calls[idx].RetryAfterSeconds, s.calls[idx].Late = a.Status, a.RetryAfterSeconds, a.Delay > 0
	if a.HTTPStatus != 0 && a.HTTPStatus != http.StatusOK {
		s.calls[idx].Status = fmt.Sprintf("HTTP %d", a.HTTPStatus)
	}
	responder := s.respond[hook]
	s.mu.Unlock()
	if a.Delay > 0 {
		select {
		case <-time.After(a.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if a.HTTPStatus != 0 && a.HTTPStatus != http.StatusOK {
		http.Error(w, "scripted failure", a.HTTPStatus)
		return
	}
	if a.Status == "" {
		a.Status = string(hooksv1.ResponseStatusSuccess)
	}
	resp := map[string]any{
		"apiVersion": hooksv1.APIVersion, "kind": hook + "Response",
		"status": a.Status, "message": a.Message, "retryAfterSeconds": a.RetryAfterSeconds,
	}
	if responder != nil && a.Status == string(hooksv1.ResponseStatusSuccess) {
		for k, v := range responder(full) {
			resp[k] = v
		}
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// certificates makes a CA and a serving certificate for 127.0.0.1 signed by it.
func certificates() ([]byte, tls.Certificate, error) {
	p, err := selfsigned.New("127.0.0.1", "localhost")
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	cert, err := p.TLS()
	return p.CA, cert, err
}

// Config is an ExtensionConfig registering the server under name for the namespaces labelled
// selectorKey=selectorValue, with the given settings (none when nil).
func (s *Server) Config(name, selectorKey, selectorValue string, settings map[string]string) *unstructured.Unstructured {
	spec := map[string]any{
		"clientConfig":      map[string]any{"url": s.URL, "caBundle": base64.StdEncoding.EncodeToString(s.CABundle)},
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{selectorKey: selectorValue}},
	}
	if settings != nil {
		m := map[string]any{}
		for k, v := range settings {
			m[k] = v
		}
		spec["settings"] = m
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// dropConnection closes the connection without an answer, as a server that died mid-request.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

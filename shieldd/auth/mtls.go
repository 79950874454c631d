package auth

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// MTLS authenticates TLS client certificates issued by the client CA. The
// identity is the certificate's first URI SAN, or else its CN; the tenant
// is the certificate's first Organization (O), or else the identity.
//
// The TLS layer only asks for a certificate (tls.RequestClientCert, which
// still proves the client holds its key); the chain is verified here, so
// that health checks without a certificate can connect and every failure
// is the same Unauthenticated answer with the reason in the log.
type MTLS struct {
	roots *x509.CertPool
	// Now is the clock (tests); default time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]verified
}

// verified is a cached successful verification of one presented chain.
type verified struct {
	id    Identity
	until time.Time
}

const (
	mtlsCacheSize = 4096
	mtlsCacheTTL  = time.Minute
)

// NewMTLS trusts client certificates issued by the CAs in the PEM file.
func NewMTLS(clientCAFile string) (*MTLS, error) {
	pem, err := os.ReadFile(clientCAFile)
	if err != nil {
		return nil, fmt.Errorf("client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("client CA %s: no PEM certificates", clientCAFile)
	}
	return &MTLS{roots: pool, Now: time.Now, cache: map[[sha256.Size]byte]verified{}}, nil
}

// Mode implements Authenticator.
func (m *MTLS) Mode() string { return ModeMTLS }

// Authenticate implements Authenticator.
func (m *MTLS) Authenticate(c Credentials) (Identity, error) {
	if len(c.PeerCertificates) == 0 {
		return Identity{}, fail(ReasonMissing, "no client certificate")
	}
	now := m.Now()
	// Verifying a chain costs far more than an evaluation; the same
	// connection presents the same chain on every call.
	h := sha256.New()
	for _, cert := range c.PeerCertificates {
		h.Write(cert.Raw)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	m.mu.Lock()
	v, ok := m.cache[key]
	m.mu.Unlock()
	if ok && now.Before(v.until) {
		return v.id, nil
	}

	leaf := c.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, cert := range c.PeerCertificates[1:] {
		inter.AddCert(cert)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{
		Roots: m.roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return Identity{}, fail(ReasonBadCertificate, "%v", err)
	}
	id, err := certIdentity(leaf)
	if err != nil {
		return Identity{}, fail(ReasonBadCertificate, "%v", err)
	}
	until := now.Add(mtlsCacheTTL)
	for _, cert := range chains[0] {
		if cert.NotAfter.Before(until) {
			until = cert.NotAfter
		}
	}
	m.mu.Lock()
	if len(m.cache) >= mtlsCacheSize {
		clear(m.cache)
	}
	m.cache[key] = verified{id: id, until: until}
	m.mu.Unlock()
	return id, nil
}

func certIdentity(cert *x509.Certificate) (Identity, error) {
	subject := cert.Subject.CommonName
	if len(cert.URIs) > 0 {
		subject = cert.URIs[0].String()
	}
	if subject == "" {
		return Identity{}, errors.New("the certificate has neither a URI SAN nor a CN")
	}
	tenant := subject
	if len(cert.Subject.Organization) > 0 && cert.Subject.Organization[0] != "" {
		tenant = cert.Subject.Organization[0]
	}
	return Identity{Method: ModeMTLS, Subject: subject, Tenant: tenant}, nil
}

// ServerTLS loads the server's certificate. With mtls true the server
// asks every client for a certificate (verified by MTLS, not here).
func ServerTLS(certFile, keyFile string, mtls bool) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS needs both a certificate and a key file")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if mtls {
		cfg.ClientAuth = tls.RequestClientCert
	}
	return cfg, nil
}

// Package testca is a private certificate authority for tests: it signs
// the certificates of real TLS listeners on loopback, and a client trusts
// them through its pool or, for code that uses the system roots (mcpgen's
// commands, the session layer), through SSL_CERT_FILE set by Trust before
// the first TLS connection of the process.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"
)

// CA is the authority and the one server certificate it signed, valid for
// the loopback names: 127.0.0.1, 127.0.0.2, ::1 and localhost.
type CA struct {
	// Pool trusts the authority alone.
	Pool *x509.CertPool
	// PEM is the authority's certificate.
	PEM  []byte
	leaf tls.Certificate
}

// New makes an authority and its server certificate.
func New() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	root := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mcpgen test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, root, root, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	root, err = x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2"), net.IPv6loopback},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, root, &leafKey.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca := &CA{Pool: x509.NewCertPool(), PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	ca.Pool.AddCert(root)
	ca.leaf = tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}
	return ca, nil
}

// Trust writes the authority's certificate to a file in dir and points
// SSL_CERT_FILE at it, so every client using the system roots trusts it
// (and the public roots no longer). Go reads the system roots once per
// process: call Trust in TestMain, before any TLS connection.
func (ca *CA) Trust(dir string) error {
	p := filepath.Join(dir, "test-ca.pem")
	if err := os.WriteFile(p, ca.PEM, 0o644); err != nil {
		return err
	}
	return os.Setenv("SSL_CERT_FILE", p)
}

// Server starts an https server for h listening on addr ("": 127.0.0.1
// on a free port; "127.0.0.2:0" for a second host), its certificate signed
// by the authority.
func (ca *CA) Server(addr string, h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			panic(fmt.Sprintf("testca: listen on %s: %v", addr, err))
		}
		s.Listener.Close()
		s.Listener = ln
	}
	s.TLS = ca.ServerTLS()
	// Handshakes cut short when a test closes its clients are no news.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	return s
}

// ServerTLS is the TLS configuration of a server with the authority's
// certificate, for a server set up by hand.
func (ca *CA) ServerTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{ca.leaf}}
}

// Client is an HTTP client trusting the authority alone.
func (ca *CA) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
}

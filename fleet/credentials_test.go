package fleet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// TestCredentials joins a host and connects a client with each kind of credentials a
// NATS server takes — token, NKey seed, .creds file (operator mode), user and password
// over TLS — and is refused with wrong ones, without the secret in the error.
func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	userKey, _ := nkeys.CreateUser()
	userSeed, _ := userKey.Seed()
	userPub, _ := userKey.PublicKey()
	otherKey, _ := nkeys.CreateUser()
	otherSeed, _ := otherKey.Seed()

	operatorKey, _ := nkeys.CreateOperator()
	operatorPub, _ := operatorKey.PublicKey()
	operator := jwt.NewOperatorClaims(operatorPub)
	accountKey, _ := nkeys.CreateAccount()
	accountPub, _ := accountKey.PublicKey()
	accountJWT, err := jwt.NewAccountClaims(accountPub).Encode(operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	resolver.Store(accountPub, accountJWT)
	credsUser, _ := nkeys.CreateUser()
	credsPub, _ := credsUser.PublicKey()
	credsSeed, _ := credsUser.Seed()
	userJWT, err := jwt.NewUserClaims(credsPub).Encode(accountKey)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(userJWT, credsSeed)
	if err != nil {
		t.Fatal(err)
	}
	strangerKey, _ := nkeys.CreateAccount() // signs a user the server does not trust
	strangerJWT, _ := jwt.NewUserClaims(credsPub).Encode(strangerKey)
	strangerCreds, _ := jwt.FormatUserConfig(strangerJWT, credsSeed)

	certFile, keyFile := selfSigned(t, dir)

	for _, tc := range []struct {
		name      string
		server    *server.Options
		scheme    string
		good, bad func(*Config)
		secret    string // must not appear in the refusal
	}{
		{name: "token", server: &server.Options{Authorization: "s3cret-token"},
			good: func(c *Config) { c.Token = "s3cret-token" }, bad: func(c *Config) { c.Token = "wrong-token" }, secret: "wrong-token"},
		{name: "nkey", server: &server.Options{Nkeys: []*server.NkeyUser{{Nkey: userPub}}},
			good: func(c *Config) { c.NKeySeedFile = write("user.nk", userSeed) },
			bad:  func(c *Config) { c.NKeySeedFile = write("other.nk", otherSeed) }, secret: string(otherSeed)},
		{name: "creds", server: &server.Options{TrustedOperators: []*jwt.OperatorClaims{operator}, AccountResolver: resolver, NoSystemAccount: true},
			good: func(c *Config) { c.CredsFile = write("user.creds", creds) },
			bad:  func(c *Config) { c.CredsFile = write("stranger.creds", strangerCreds) }, secret: string(credsSeed)},
		{name: "tls", scheme: "tls", server: tlsServer(t, certFile, keyFile, "lab", "tls-pass"),
			good: func(c *Config) { c.CAFile, c.User, c.Password = certFile, "lab", "tls-pass" },
			bad:  func(c *Config) { c.User, c.Password = "lab", "tls-pass" }, secret: "tls-pass"}, // no CA: the certificate is not trusted
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := startNATS(t, tc.server)
			cfg := testConfig(ns)
			if tc.scheme != "" {
				cfg.URL = tc.scheme + strings.TrimPrefix(cfg.URL, "nats")
			}
			good := cfg
			tc.good(&good)
			srv := startIdleHost(t)
			m, err := Join(context.Background(), control.New(srv, control.Options{}), MemberOptions{Config: good, Host: "a"})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			c := dialClient(t, good)
			// A round trip to the host: it answers for its own (unknown) session.
			if _, err := c.Tools(context.Background(), "x-001@a", hostapi.ToolsRequest{}); wire.CodeOf(err) != wire.CodeSessionNotFound {
				t.Fatalf("request to the host: %v", err)
			}
			bad := cfg
			tc.bad(&bad)
			_, err = Dial(context.Background(), ClientOptions{Config: bad})
			if err == nil || strings.Contains(err.Error(), tc.secret) {
				t.Fatalf("wrong credentials: %v", err)
			}
			// Refused credentials are told apart from an unreachable server (the CLI's
			// exit code 6, not 4); an untrusted server certificate is not a refusal.
			if refused := errors.Is(err, ErrCredentialsRefused); refused != (tc.scheme == "") || refused == errors.Is(err, ErrUnreachable) {
				t.Fatalf("wrong credentials: refused %v, unreachable %v: %v", refused, errors.Is(err, ErrUnreachable), err)
			}
		})
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleet test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// tlsServer is a server that requires TLS, with one user.
func tlsServer(t *testing.T, certFile, keyFile, user, password string) *server.Options {
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	return &server.Options{TLS: true, TLSConfig: tc, TLSTimeout: 5, Username: user, Password: password}
}

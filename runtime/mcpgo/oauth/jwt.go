package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// assertion is a private_key_jwt client assertion (RFC 7523 section
// 2.2): iss and sub the client, aud the authorization server, short-lived
// and unique. x/oauth2 signs only RS256 assertions, and only for its JWT
// bearer grant, so it is done here.
func assertion(key mcpruntime.Secret, alg, clientID, aud string) (string, error) {
	block, _ := pem.Decode([]byte(key))
	if block == nil {
		return "", errors.New("private_key_jwt: the private key is not PEM")
	}
	var signer crypto.Signer
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		s, ok := k.(crypto.Signer)
		if !ok {
			return "", errors.New("private_key_jwt: unsupported key type")
		}
		signer = s
	} else if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		signer = k
	} else if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		signer = k
	} else {
		return "", errors.New("private_key_jwt: cannot parse the private key (PKCS#8, SEC 1 or PKCS#1 PEM)")
	}
	switch signer.(type) {
	case *ecdsa.PrivateKey:
		if alg == "" {
			alg = "ES256"
		}
		if alg != "ES256" {
			return "", fmt.Errorf("private_key_jwt: algorithm %q does not fit an EC key (ES256)", alg)
		}
	case *rsa.PrivateKey:
		if alg == "" {
			alg = "RS256"
		}
		if alg != "RS256" {
			return "", fmt.Errorf("private_key_jwt: algorithm %q does not fit an RSA key (RS256)", alg)
		}
	default:
		return "", errors.New("private_key_jwt: unsupported key type (EC P-256 or RSA)")
	}
	now := time.Now()
	head, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID, "sub": clientID, "aud": aud,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": randomString(),
	})
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(head) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := signer.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", err
		}
		sig = append(fixed(r, 32), fixed(s, 32)...) // JWS wants r||s, not ASN.1
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	}
	return input + "." + enc.EncodeToString(sig), nil
}

func fixed(n *big.Int, size int) []byte {
	b := make([]byte, size)
	return n.FillBytes(b)
}

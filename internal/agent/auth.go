package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// TokenEnv is the environment variable an agent reads its token from when
// no token file is given; the coordinator passes a fresh token to the agents
// it starts itself this way, so it never appears on a command line.
const TokenEnv = "HEADROOM_AGENT_TOKEN"

// The token is a shared secret. It never crosses the wire: the coordinator
// sends a random nonce and the agent answers with HMAC-SHA256(token, nonce
// || name), so a recorded session cannot be replayed and an eavesdropper
// does not learn the token. (The rest of the session is not encrypted:
// run agents on a network you trust, or through a tunnel.)

// newNonce returns 32 random bytes.
func newNonce() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // the kernel's random source failing is not recoverable
	}
	return b
}

// NewToken returns a fresh random token (hex) for agents this process
// starts itself.
func NewToken() []byte { return []byte(hex.EncodeToString(newNonce())) }

func mac(token, nonce []byte, name string) []byte {
	m := hmac.New(sha256.New, token)
	m.Write(nonce)
	m.Write([]byte(name))
	return m.Sum(nil)
}

// ReadToken reads a token from file, or from TokenEnv when file is "".
// Surrounding white space (a trailing newline) is not part of it. The
// token itself is never part of an error.
func ReadToken(file string) ([]byte, error) {
	var s string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("cannot read the agent token file: %w", err)
		}
		s = string(b)
	} else {
		s = os.Getenv(TokenEnv)
		if s == "" {
			return nil, fmt.Errorf("no agent token: pass --token-file FILE or set %s", TokenEnv)
		}
	}
	s = strings.TrimSpace(s)
	if len(s) < 16 {
		return nil, errors.New("the agent token is shorter than 16 characters; use a long random one (e.g. `openssl rand -hex 32`)")
	}
	return []byte(s), nil
}

package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
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

// The token is a shared secret, and both sides prove they hold it before
// anything else crosses: the coordinator sends a fresh nonce, the agent
// answers with a fresh nonce of its own and its proof, and the coordinator
// answers with its proof (proof below). The token itself never crosses the
// wire, a recorded session cannot be replayed (each side's nonce is new),
// and an answer cannot be reflected back as the other side's (the role is
// part of the proof). An agent thus never takes an order from a peer that
// does not hold its token. Every frame after that carries a MAC under a key
// drawn from the token and both nonces (protocol.go), so no one without the
// token can change, drop, replay or add a message unnoticed. (The session
// is not encrypted: what it carries can be read on the way; run agents on
// a network you trust, or through a tunnel.)

// nonceLen is the length of each side's nonce; a shorter one from a peer
// would make its proof easier to replay, so it is refused.
const nonceLen = 32

// The roles each side proves as.
const (
	roleAgent       = "headroom agent"
	roleCoordinator = "headroom coordinator"
)

// newNonce returns nonceLen random bytes.
func newNonce() []byte {
	b := make([]byte, nonceLen)
	if _, err := rand.Read(b); err != nil {
		panic(err) // the kernel's random source failing is not recoverable
	}
	return b
}

// NewToken returns a fresh random token (hex) for agents this process
// starts itself.
func NewToken() []byte { return []byte(hex.EncodeToString(newNonce())) }

// proof is HMAC-SHA256(token, role || 0 || own nonce || peer nonce ||
// agent name): what a side in role sends to show it holds token. The
// nonces have a fixed length and the role ends at the zero byte, so no two
// different inputs run together into the same message.
func proof(token []byte, role string, own, peer []byte, name string) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(role))
	m.Write([]byte{0})
	m.Write(own)
	m.Write(peer)
	m.Write([]byte(name))
	return m.Sum(nil)
}

// sessionKey is the key that seals a session's frames after the
// handshake: HMAC-SHA256(token, "headroom session" || 0 || coordinator's
// nonce || agent's nonce || agent name), new for every session because
// both nonces are.
func sessionKey(token, coordinatorNonce, agentNonce []byte, name string) []byte {
	return proof(token, "headroom session", coordinatorNonce, agentNonce, name)
}

// The directions of a session's frames, part of each frame's MAC, so that
// a frame cannot be sent back to the side that sealed it.
const (
	dirCoordinator byte = 'C' // coordinator to agent
	dirAgent       byte = 'A' // agent to coordinator
)

// macLen is the length of a sealed frame's MAC.
const macLen = sha256.Size

// sealMAC is a frame's MAC: HMAC-SHA256(key, direction || sequence number
// (8 bytes, big-endian) || the frame's JSON). The number makes a dropped,
// repeated or reordered frame fail, as the next frame then carries the
// wrong one.
func sealMAC(key []byte, dir byte, seq uint64, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	var head [9]byte
	head[0] = dir
	binary.BigEndian.PutUint64(head[1:], seq)
	m.Write(head[:])
	m.Write(payload)
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

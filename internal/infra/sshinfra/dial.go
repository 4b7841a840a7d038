package sshinfra

import (
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostConfig is one host reached over ssh, as the spec gives it (paths
// resolved). It holds no secret: a key's passphrase is read from
// PassphraseEnv or PassphraseFile when a connection is made, so the
// configuration can be passed to a relay process and stored freely.
type HostConfig struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	User    string `json:"user"`
	KeyFile string `json:"key_file,omitempty"`
	Agent   bool   `json:"agent,omitempty"`
	// PassphraseEnv and PassphraseFile name where key_file's passphrase
	// is; the passphrase itself is never kept here.
	PassphraseEnv  string `json:"passphrase_env,omitempty"`
	PassphraseFile string `json:"passphrase_file,omitempty"`
	KnownHosts     string `json:"known_hosts,omitempty"`
	// InsecureIgnoreHostKey accepts any host key (a loud note says so).
	InsecureIgnoreHostKey bool `json:"insecure_ignore_host_key,omitempty"`
	// Type and PricePerHour price the host (0 = free or unknown).
	Type         string  `json:"type,omitempty"`
	PricePerHour float64 `json:"price_per_hour,omitempty"`
	// Region is the host's region label, recorded with its facts.
	Region string `json:"region,omitempty"`
}

// hostPort is the address ssh dials.
func (c HostConfig) hostPort() string {
	return net.JoinHostPort(c.Address, strconv.Itoa(c.port()))
}

func (c HostConfig) port() int {
	if c.Port == 0 {
		return 22
	}
	return c.Port
}

// knownHostsFile is the known_hosts file checked (default
// ~/.ssh/known_hosts).
func (c HostConfig) knownHostsFile() string {
	if c.KnownHosts != "" {
		return c.KnownHosts
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "~/.ssh/known_hosts"
	}
	return filepath.Join(home, ".ssh", "known_hosts")
}

// dialTimeout bounds the TCP connection and the ssh handshake.
const dialTimeout = 15 * time.Second

// dial opens an authenticated connection to the host, its key checked.
func (c HostConfig) dial() (*ssh.Client, error) {
	cfg, closeAuth, err := c.clientConfig()
	if err != nil {
		return nil, err
	}
	defer closeAuth()
	cl, err := ssh.Dial("tcp", c.hostPort(), cfg)
	if err != nil {
		var he *hostKeyError
		if errors.As(err, &he) {
			return nil, he
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			return nil, fmt.Errorf("host %s (%s): the server refused %s as user %s; add the key's public half to ~%s/.ssh/authorized_keys there", c.Name, c.hostPort(), c.authName(), c.User, c.User)
		}
		return nil, fmt.Errorf("host %s: cannot connect over ssh to %s: %v", c.Name, c.hostPort(), err)
	}
	return cl, nil
}

func (c HostConfig) authName() string {
	if c.KeyFile != "" {
		return "the key " + c.KeyFile
	}
	return "the ssh-agent's keys"
}

// clientConfig builds the ssh client configuration: user, keys (file or
// agent) and the host key check. closeAuth releases the agent connection
// once the handshake is done.
func (c HostConfig) clientConfig() (cfg *ssh.ClientConfig, closeAuth func(), err error) {
	closeAuth = func() {}
	cfg = &ssh.ClientConfig{User: c.User, Timeout: dialTimeout}
	switch {
	case c.KeyFile != "":
		signer, err := c.keySigner()
		if err != nil {
			return nil, nil, err
		}
		cfg.Auth = []ssh.AuthMethod{ssh.PublicKeys(signer)}
	case c.Agent:
		sock := os.Getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, nil, fmt.Errorf("host %s: agent: true, but SSH_AUTH_SOCK is not set; start ssh-agent and ssh-add the key, or give key_file", c.Name)
		}
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, nil, fmt.Errorf("host %s: cannot reach the ssh-agent at %s: %v", c.Name, sock, err)
		}
		closeAuth = func() { conn.Close() }
		cfg.Auth = []ssh.AuthMethod{ssh.PublicKeysCallback(agent.NewClient(conn).Signers)}
	default:
		return nil, nil, fmt.Errorf("host %s: no key_file and no agent to authenticate with", c.Name)
	}
	if c.InsecureIgnoreHostKey {
		cfg.HostKeyCallback = ssh.InsecureIgnoreHostKey()
		return cfg, closeAuth, nil
	}
	file := c.knownHostsFile()
	check, err := knownhosts.New(file)
	if err != nil {
		closeAuth()
		return nil, nil, fmt.Errorf("host %s: cannot read the known_hosts file %s (%v); add the host's key with `ssh-keyscan -p %d %s >> %s` after checking its fingerprint", c.Name, file, err, c.port(), c.Address, file)
	}
	cfg.HostKeyAlgorithms = knownAlgorithms(check, c.hostPort())
	cfg.HostKeyCallback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := check(hostname, remote, key)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			return &hostKeyError{host: c, file: file, offered: key, known: ke.Want}
		}
		return err
	}
	return cfg, closeAuth, nil
}

// keySigner reads the private key, with its passphrase from the
// environment or a file when it is encrypted. Errors never hold the
// passphrase.
func (c HostConfig) keySigner() (ssh.Signer, error) {
	b, err := os.ReadFile(c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("host %s: cannot read key_file %s: %v", c.Name, c.KeyFile, err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	var missing *ssh.PassphraseMissingError
	if !errors.As(err, &missing) {
		if err != nil {
			return nil, fmt.Errorf("host %s: key_file %s is not a private key ssh can use: %v", c.Name, c.KeyFile, err)
		}
		return signer, nil
	}
	pass, err := c.passphrase()
	if err != nil {
		return nil, err
	}
	signer, err = ssh.ParsePrivateKeyWithPassphrase(b, pass)
	if err != nil {
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, fmt.Errorf("host %s: the passphrase from %s does not open key_file %s", c.Name, c.passphraseSource(), c.KeyFile)
		}
		return nil, fmt.Errorf("host %s: cannot open key_file %s with the passphrase from %s", c.Name, c.KeyFile, c.passphraseSource())
	}
	return signer, nil
}

func (c HostConfig) passphrase() ([]byte, error) {
	switch {
	case c.PassphraseEnv != "":
		v, ok := os.LookupEnv(c.PassphraseEnv)
		if !ok {
			return nil, fmt.Errorf("host %s: key_file %s is encrypted and the variable %s (passphrase_env) is not set", c.Name, c.KeyFile, c.PassphraseEnv)
		}
		return []byte(v), nil
	case c.PassphraseFile != "":
		b, err := os.ReadFile(c.PassphraseFile)
		if err != nil {
			return nil, fmt.Errorf("host %s: cannot read passphrase_file %s: %v", c.Name, c.PassphraseFile, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return []byte(strings.TrimSuffix(line, "\r")), nil
	}
	return nil, fmt.Errorf("host %s: key_file %s is encrypted; give its passphrase in an environment variable (passphrase_env) or a file (passphrase_file)", c.Name, c.KeyFile)
}

func (c HostConfig) passphraseSource() string {
	if c.PassphraseEnv != "" {
		return "$" + c.PassphraseEnv
	}
	return c.PassphraseFile
}

// knownAlgorithms lists the key types known_hosts holds for hostPort, so
// that the server is asked for a key of a type that can be checked (it
// might otherwise offer an ed25519 key where only its ECDSA key is
// known, which would read as a changed key). nil = the library's order.
func knownAlgorithms(check ssh.HostKeyCallback, hostPort string) []string {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil
	}
	addr, err := net.ResolveTCPAddr("tcp", hostPort)
	if err != nil {
		addr = &net.TCPAddr{}
	}
	var ke *knownhosts.KeyError
	if !errors.As(check(hostPort, addr, probe), &ke) || len(ke.Want) == 0 {
		return nil
	}
	var out []string
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			out = append(out, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			out = append(out, t)
		}
	}
	return out
}

// hostKeyError is a host key that known_hosts does not vouch for.
type hostKeyError struct {
	host    HostConfig
	file    string
	offered ssh.PublicKey
	known   []knownhosts.KnownKey
}

func (e *hostKeyError) Error() string {
	c := e.host
	fp := ssh.FingerprintSHA256(e.offered)
	if len(e.known) == 0 {
		return fmt.Sprintf("host %s (%s) is not in the known_hosts file %s; check that its %s key is %s, then add it with `ssh-keyscan -p %d %s >> %s`",
			c.Name, c.hostPort(), e.file, e.offered.Type(), fp, c.port(), c.Address, e.file)
	}
	k := e.known[0]
	return fmt.Sprintf("host %s (%s) offered a host key (%s %s) that does not match the one in the known_hosts file %s, line %d; if the host was reinstalled, remove that line (`ssh-keygen -R %s -f %s`), otherwise someone may be posing as the host",
		c.Name, c.hostPort(), e.offered.Type(), fp, e.file, k.Line, knownhosts.Normalize(c.hostPort()), e.file)
}

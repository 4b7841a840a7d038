package redistarget

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Options are the redis target's spec fields (docs/targets.md). Either
// address names an existing server, or managed asks Headroom to run a
// private one.
type Options struct {
	// Address is host:port of the server (default 127.0.0.1:6379).
	Address string `yaml:"address"`
	// Username is the ACL user (default: none, which is Redis's "default"
	// user).
	Username string `yaml:"username"`
	// PasswordEnv names an environment variable that holds the password.
	PasswordEnv string `yaml:"password_env"`
	// PasswordFile is a file whose first line is the password.
	PasswordFile string `yaml:"password_file"`
	// DB is the database number SELECTed on every connection (default 0).
	DB int `yaml:"db"`
	// PoolSize is the most connections open at once (default 64). The
	// number of request slots is not known when the target opens, so the
	// default is a fixed number; slots beyond it wait for a free
	// connection, and that wait is part of their latency.
	PoolSize int `yaml:"pool_size"`
	// DialTimeout bounds opening one connection (default 5s).
	DialTimeout spec.Duration `yaml:"dial_timeout"`
	// ReadTimeout bounds waiting for one reply (default 5s). It must be set:
	// go-redis does not stop a request when its context is cancelled, so
	// this, not the load section's timeout, is what ends a request to a
	// server that stopped answering.
	ReadTimeout spec.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds sending one command (default 5s; must be set, as
	// ReadTimeout).
	WriteTimeout spec.Duration `yaml:"write_timeout"`
	// TLS connects with TLS.
	TLS TLSOptions `yaml:"tls"`
	// Managed runs a private Redis server for the campaign instead of
	// connecting to an existing one.
	Managed *deploy.Managed `yaml:"managed"`
	// KeyPrefix is put before every record key and the scan index
	// (default none: keys are the YCSB keys, e.g. user6284781860667377211).
	KeyPrefix string `yaml:"key_prefix"`
	// Mode is the record layout: hash (default; YCSB's Redis binding: one
	// hash per record, one hash field per YCSB field) or string (one string
	// value per record, the fields concatenated; reads are GET).
	Mode string `yaml:"mode"`
	// ReadFrom is where reads go in a managed cluster of mode replicas:
	// primary (default, with the writes) or replicas (each client takes
	// the replicas in turn; they may lag the primary by a few writes).
	ReadFrom string `yaml:"read_from"`
}

// TLSOptions are the target's tls: fields.
type TLSOptions struct {
	// Enabled turns TLS on.
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM file of the CA certificates to trust (default: the
	// system's).
	CAFile string `yaml:"ca_file"`
	// ServerName is the name the certificate must carry (default: the
	// address's host).
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify accepts any certificate (self-signed test servers).
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// Record layouts (Options.Mode).
const (
	modeHash   = "hash"
	modeString = "string"
)

const defaultAddress = "127.0.0.1:6379"

func defaultOptions() *Options {
	return &Options{
		PoolSize:     64,
		DialTimeout:  spec.Duration{Duration: 5 * time.Second},
		ReadTimeout:  spec.Duration{Duration: 5 * time.Second},
		WriteTimeout: spec.Duration{Duration: 5 * time.Second},
		Mode:         modeHash,
		ReadFrom:     readPrimary,
	}
}

// Where reads go (Options.ReadFrom).
const (
	readPrimary  = "primary"
	readReplicas = "replicas"
)

func validate(o any) error {
	opts := o.(*Options)
	if opts.Mode != modeHash && opts.Mode != modeString {
		return fmt.Errorf("mode: %q is not a valid value; use hash or string", opts.Mode)
	}
	if m := opts.Managed; m != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"address", opts.Address != ""}, {"username", opts.Username != ""},
			{"password_env", opts.PasswordEnv != ""}, {"password_file", opts.PasswordFile != ""},
			{"tls", opts.TLS != (TLSOptions{})},
		} {
			if f.set {
				return fmt.Errorf("%s: a managed instance has its own address and password and no TLS; remove %s or remove managed", f.name, f.name)
			}
		}
		if m.Port < 0 || m.Port > 65535 {
			return fmt.Errorf("managed.port: %d is out of range; use 1 to 65535, or 0 for a free port", m.Port)
		}
		if err := deploy.CheckRedisSettings(m.Settings); err != nil {
			return err
		}
		if err := validateCluster(opts); err != nil {
			return err
		}
	}
	if opts.ReadFrom != readPrimary && opts.ReadFrom != readReplicas {
		return fmt.Errorf("read_from: %q is not a valid value; use primary or replicas", opts.ReadFrom)
	}
	if opts.ReadFrom == readReplicas && (opts.Managed == nil || opts.Managed.Cluster == nil || opts.Managed.Cluster.ModeOr(deploy.RedisModeReplicas) != deploy.RedisModeReplicas) {
		return fmt.Errorf("read_from: replicas needs a managed cluster of mode replicas (managed.cluster with mode: replicas); remove read_from or add the cluster")
	}
	if opts.Address != "" {
		host, port, err := net.SplitHostPort(opts.Address)
		if err != nil || host == "" {
			return fmt.Errorf("address: %q is not host:port; write it like 127.0.0.1:6379", opts.Address)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("address: port %q is not a number from 1 to 65535", port)
		}
	}
	if opts.PasswordEnv != "" && opts.PasswordFile != "" {
		return fmt.Errorf("password_env: give either password_env or password_file, not both")
	}
	if opts.PasswordEnv != "" && !validEnvName(opts.PasswordEnv) {
		return fmt.Errorf("password_env: %q is not an environment variable name; use letters, digits and underscores", opts.PasswordEnv)
	}
	if opts.DB < 0 {
		return fmt.Errorf("db: must be 0 or more, got %d", opts.DB)
	}
	if opts.PoolSize < 1 || opts.PoolSize > 10000 {
		return fmt.Errorf("pool_size: must be at least 1 (and at most 10000), got %d", opts.PoolSize)
	}
	if opts.DialTimeout.Duration <= 0 {
		return fmt.Errorf("dial_timeout: must be above 0, got %v", opts.DialTimeout.Duration)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"read_timeout", opts.ReadTimeout.Duration}, {"write_timeout", opts.WriteTimeout.Duration}} {
		if f.d < time.Millisecond {
			return fmt.Errorf("%s: must be at least 1ms, got %v; the Redis client cannot abandon a request any other way, so set it to at most load.timeout (e.g. 5s)", f.name, f.d)
		}
	}
	t := opts.TLS
	if !t.Enabled && (t.CAFile != "" || t.ServerName != "" || t.InsecureSkipVerify) {
		return fmt.Errorf("tls.enabled: tls options are set but TLS is off; add enabled: true")
	}
	if t.InsecureSkipVerify && (t.CAFile != "" || t.ServerName != "") {
		return fmt.Errorf("tls.insecure_skip_verify: no certificate is checked, so ca_file and server_name would be ignored; remove them or this")
	}
	return nil
}

func validEnvName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// resolvePath makes p absolute against the campaign's results directory.
func resolvePath(p, dir string) string {
	if p == "" || filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// password reads the password from the environment variable or file the
// options name ("" when neither is set). Errors name the source, never the
// value.
func (o *Options) password(dir string) (string, error) {
	switch {
	case o.PasswordEnv != "":
		v, ok := os.LookupEnv(o.PasswordEnv)
		if !ok {
			return "", fmt.Errorf("password_env: the environment variable %s is not set; export it before running", o.PasswordEnv)
		}
		return v, nil
	case o.PasswordFile != "":
		p := resolvePath(o.PasswordFile, dir)
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("password_file: cannot read %s: %v", p, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimRight(line, "\r"), nil
	}
	return "", nil
}

// tlsConfig builds the client's TLS settings, nil when TLS is off.
func (o *Options) tlsConfig(dir string) (*tls.Config, error) {
	t := o.TLS
	if !t.Enabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(o.Address)
		cfg.ServerName = host
	}
	if t.CAFile != "" {
		p := resolvePath(t.CAFile, dir)
		pem, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file: cannot read %s: %v", p, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.ca_file: %s holds no PEM certificate", p)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

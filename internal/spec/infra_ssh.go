package spec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/headroom-dev/headroom/internal/lab"
)

// Infra is the infra: section: hosts that are not the lab's. Provider ssh
// reaches existing machines (rented instances, a staging fleet) over ssh;
// it excludes the lab: section. The connection fields at the section's
// level are the defaults of every host.
type Infra struct {
	Provider string `yaml:"provider"` // "ssh"
	// Catalog is a file of extra instance types (relative to the spec
	// file) whose prices a host's type: names; the shipped catalog is
	// always there.
	Catalog string    `yaml:"catalog"`
	Hosts   []SSHHost `yaml:"hosts"`
	// The connection fields of SSHConn, defaults of every host (the spec
	// decoder has no inline structs).
	Port    int    `yaml:"port"`     // default 22
	User    string `yaml:"user"`     // default: the user Headroom runs as
	KeyFile string `yaml:"key_file"` // private key, relative to the spec file
	// Agent authenticates with the keys of the ssh-agent at $SSH_AUTH_SOCK.
	Agent          *bool  `yaml:"agent"`
	PassphraseEnv  string `yaml:"passphrase_env"`  // variable holding key_file's passphrase
	PassphraseFile string `yaml:"passphrase_file"` // file holding it (first line)
	// KnownHosts is the file the host's key is checked against (default
	// ~/.ssh/known_hosts).
	KnownHosts string `yaml:"known_hosts"`
	// InsecureIgnoreHostKey accepts any host key: anyone on the path can
	// then pose as the host. Only for throw-away hosts.
	InsecureIgnoreHostKey *bool `yaml:"insecure_ignore_host_key"`
}

// SSHConn says how to reach a host over ssh. Secrets are never written
// here: a key's passphrase comes from an environment variable or a file.
type SSHConn struct {
	Port    int    `yaml:"port"`     // default 22
	User    string `yaml:"user"`     // default: the user Headroom runs as
	KeyFile string `yaml:"key_file"` // private key, relative to the spec file
	// Agent authenticates with the keys of the ssh-agent at $SSH_AUTH_SOCK.
	Agent          *bool  `yaml:"agent"`
	PassphraseEnv  string `yaml:"passphrase_env"`  // variable holding key_file's passphrase
	PassphraseFile string `yaml:"passphrase_file"` // file holding it (first line)
	// KnownHosts is the file the host's key is checked against (default
	// ~/.ssh/known_hosts).
	KnownHosts string `yaml:"known_hosts"`
	// InsecureIgnoreHostKey accepts any host key: anyone on the path can
	// then pose as the host. Only for throw-away hosts.
	InsecureIgnoreHostKey *bool `yaml:"insecure_ignore_host_key"`
}

// SSHHost is one host reached over ssh.
type SSHHost struct {
	Name    string `yaml:"name"`    // used by managed.host, events and samples
	Address string `yaml:"address"` // IP address or DNS name; servers listen on it
	// Type is an instance type of the catalog, for the host's price;
	// PricePerHour, when given, is the price instead.
	Type         string   `yaml:"type"`
	PricePerHour *float64 `yaml:"price_per_hour"`
	// Region labels the host, as lab.hosts[].region labels a lab host:
	// results and reports group the load agents on it by region.
	Region string `yaml:"region"`
	// The connection fields of SSHConn, overriding infra:'s.
	Port    int    `yaml:"port"`     // default 22
	User    string `yaml:"user"`     // default: the user Headroom runs as
	KeyFile string `yaml:"key_file"` // private key, relative to the spec file
	// Agent authenticates with the keys of the ssh-agent at $SSH_AUTH_SOCK.
	Agent          *bool  `yaml:"agent"`
	PassphraseEnv  string `yaml:"passphrase_env"`  // variable holding key_file's passphrase
	PassphraseFile string `yaml:"passphrase_file"` // file holding it (first line)
	// KnownHosts is the file the host's key is checked against (default
	// ~/.ssh/known_hosts).
	KnownHosts string `yaml:"known_hosts"`
	// InsecureIgnoreHostKey accepts any host key: anyone on the path can
	// then pose as the host. Only for throw-away hosts.
	InsecureIgnoreHostKey *bool `yaml:"insecure_ignore_host_key"`
}

// conn is the connection fields of an infra: section or host.
func newConn(port int, user, key string, agent *bool, penv, pfile, known string, insecure *bool) SSHConn {
	return SSHConn{Port: port, User: user, KeyFile: key, Agent: agent, PassphraseEnv: penv, PassphraseFile: pfile, KnownHosts: known, InsecureIgnoreHostKey: insecure}
}

// Defaults is the section's connection fields.
func (in *Infra) Defaults() SSHConn {
	return newConn(in.Port, in.User, in.KeyFile, in.Agent, in.PassphraseEnv, in.PassphraseFile, in.KnownHosts, in.InsecureIgnoreHostKey)
}

// Own is the host's own connection fields.
func (h SSHHost) Own() SSHConn {
	return newConn(h.Port, h.User, h.KeyFile, h.Agent, h.PassphraseEnv, h.PassphraseFile, h.KnownHosts, h.InsecureIgnoreHostKey)
}

// Conn is h's connection settings with the section's as defaults.
func (in *Infra) Conn(h SSHHost) SSHConn {
	c, d := h.Own(), in.Defaults()
	if c.Port == 0 {
		c.Port = d.Port
	}
	if c.Port == 0 {
		c.Port = 22
	}
	if c.User == "" {
		c.User = d.User
	}
	if c.KeyFile == "" && c.Agent == nil {
		c.KeyFile, c.Agent = d.KeyFile, d.Agent
	}
	if c.PassphraseEnv == "" && c.PassphraseFile == "" {
		c.PassphraseEnv, c.PassphraseFile = d.PassphraseEnv, d.PassphraseFile
	}
	if c.KnownHosts == "" {
		c.KnownHosts = d.KnownHosts
	}
	if c.InsecureIgnoreHostKey == nil {
		c.InsecureIgnoreHostKey = d.InsecureIgnoreHostKey
	}
	return c
}

// SSHEventActions are the events an ssh host takes: its servers killed,
// stopped, continued and started again, and partitions made with
// iptables. Limits and links belong to a provider that owns the machine
// (the lab); cluster node events on ssh hosts are not supported yet.
var SSHEventActions = []string{lab.ActKill, lab.ActStart, lab.ActStop, lab.ActContinue, lab.ActPartition, lab.ActHeal}

var sshHostName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)

// regionName is a region label's form, the lab's (lab.hosts[].region).
var regionName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,15}$`)

// infra checks the infra: section and the events that act on its hosts.
func (c *checker) infra(s *Spec) {
	in := s.Infra
	if s.Lab != nil {
		c.fail("infra", "a spec runs either in a lab (lab:) or on the hosts of infra:, not both; remove one")
		return
	}
	if in.Provider != "ssh" {
		c.fail("infra.provider", "%q is not a provider; use ssh (the lab is the lab: section)", in.Provider)
		return
	}
	if len(in.Hosts) == 0 {
		c.fail("infra.hosts", "list at least one host: {name: db1, address: 10.0.0.5, user: admin, key_file: ~/.ssh/id_ed25519}")
		return
	}
	dir := ""
	if c.file != "" {
		dir = filepath.Dir(c.file)
	}
	var cat *lab.Catalog
	if file := in.Catalog; file != "" {
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		var err error
		if cat, err = lab.LoadCatalog(file); err != nil {
			c.fail("infra.catalog", "%s", strings.TrimPrefix(oneLine(err.Error()), "lab.catalog: "))
			return
		}
	} else {
		cat = lab.DefaultCatalog()
	}
	c.sshConn("infra", in.Defaults())
	var names []string
	for i, h := range in.Hosts {
		p := fmt.Sprintf("infra.hosts[%d]", i)
		switch {
		case !sshHostName.MatchString(h.Name):
			c.fail(p+".name", "%q is not a host name; use a letter then letters, digits, - or _ (at most 32)", h.Name)
		case h.Name == "client" || h.Name == "local":
			c.fail(p+".name", "%q names Headroom's own side; choose another name", h.Name)
		case slices.Contains(names, h.Name):
			c.fail(p+".name", "%q is listed twice", h.Name)
		}
		names = append(names, h.Name)
		if h.Address == "" || strings.ContainsAny(h.Address, " /@") {
			c.fail(p+".address", "give the host's IP address or DNS name (without user@ or :port; port: is its own field)")
		}
		if h.Type != "" {
			if _, ok := cat.Instance(h.Type); !ok {
				c.fail(p+".type", "%q is not in the catalog; use one of %s, or give price_per_hour", h.Type, strings.Join(cat.InstanceNames(), ", "))
			}
		}
		if h.PricePerHour != nil && *h.PricePerHour < 0 {
			c.fail(p+".price_per_hour", "a price cannot be negative")
		}
		if h.Region != "" && !regionName.MatchString(h.Region) {
			c.fail(p+".region", "%q is not a region label; use a letter then at most 15 letters, digits or - (eu-west, us1)", h.Region)
		}
		c.sshConn(p, h.Own())
		conn := in.Conn(h)
		if conn.KeyFile == "" && (conn.Agent == nil || !*conn.Agent) {
			c.fail(p, "say how host %s authenticates: key_file (a private key) or agent: true (the ssh-agent at $SSH_AUTH_SOCK), here or at infra:", h.Name)
		}
	}
	c.sshEvents(s, names)
}

// sshConn checks one set of connection fields at path p.
func (c *checker) sshConn(p string, conn SSHConn) {
	if conn.Port < 0 || conn.Port > 65535 {
		c.fail(p+".port", "%d is not a TCP port", conn.Port)
	}
	if conn.PassphraseEnv != "" && conn.PassphraseFile != "" {
		c.fail(p+".passphrase_env", "give the passphrase in passphrase_env or passphrase_file, not both")
	}
	if conn.InsecureIgnoreHostKey != nil && *conn.InsecureIgnoreHostKey && conn.KnownHosts != "" {
		c.fail(p+".insecure_ignore_host_key", "known_hosts is not read when host keys are ignored; remove one of them")
	}
}

// sshEvents checks the events against the ssh hosts: only the actions an
// ssh host takes, on hosts infra: lists.
func (c *checker) sshEvents(s *Spec, hosts []string) {
	measure := s.Phases.Measure.Duration
	for i, e := range s.Events {
		p := fmt.Sprintf("events[%d]", i)
		if !slices.Contains(SSHEventActions, e.Action) {
			c.fail(p+".action", "%s is not applied to ssh hosts, which Headroom does not own (their limits and links are the provider's); use one of %s, or run in a lab", e.Action, strings.Join(SSHEventActions, ", "))
			continue
		}
		if e.At < 0 || e.At >= measure {
			c.fail(p+".at", "%v is outside the measured phase (0 to %v); events happen at an offset into it", e.At, measure)
		}
		switch e.Action {
		case lab.ActHeal:
		case lab.ActPartition:
			if len(e.Groups) != 2 {
				c.fail(p+".groups", "a partition has two groups of host names (client = Headroom's side)")
				continue
			}
			for gi, g := range e.Groups {
				for _, n := range g {
					if n != "client" && !slices.Contains(hosts, n) {
						c.fail(fmt.Sprintf("%s.groups[%d]", p, gi), "%q is not a host of infra:; use one of %s or client", n, strings.Join(hosts, ", "))
					}
				}
			}
		default:
			if !slices.Contains(hosts, e.Host) {
				c.fail(p+".host", "%q is not a host of infra:; use one of %s", e.Host, strings.Join(hosts, ", "))
			}
		}
	}
}

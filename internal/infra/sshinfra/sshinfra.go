// Package sshinfra is the infra provider of hosts reached over ssh:
// existing machines (rented instances, a staging fleet) that Headroom does
// not own. It connects with golang.org/x/crypto/ssh (a key file or the
// ssh-agent, the host key checked against known_hosts unless the spec
// says loudly not to), runs managed servers there through a relay of its
// session (relay.go), samples the hosts' /proc over the session
// (monitor.go), and applies the faults that make sense on a real host:
// killing, stopping and continuing the servers it started, and partitions
// with iptables when the ssh user may change them (faults.go).
package sshinfra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/headroom-dev/headroom/internal/infra"
)

// Name is the provider's name.
const Name = "ssh"

// Options describe the hosts of one campaign.
type Options struct {
	Hosts []HostConfig
	// Partitions says that the spec's events partition hosts: Up then
	// checks that iptables can be changed on every host.
	Partitions bool
}

// Provider connects to the hosts and gives them as infra hosts.
type Provider struct {
	opt Options

	mu      sync.Mutex
	clients map[string]*ssh.Client // by host name, while up
	hosts   []*Host
	dirs    map[string][]string // host -> instance directories of servers started there
	stopped map[string]bool     // host -> its servers are stopped (a fault)
	parts   map[string]bool     // host -> it has partition rules
}

// New returns the provider of opt's hosts. Nothing is connected yet.
func New(opt Options) *Provider {
	return &Provider{opt: opt}
}

// Name implements infra.Provider.
func (p *Provider) Name() string { return Name }

// Up implements infra.Provider: it connects to every host (checking its
// key), reads its CPUs and memory, and checks that the programs the
// relay needs are there.
func (p *Provider) Up(_ context.Context, opt infra.UpOptions) (infra.Hosts, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clients != nil {
		return p.infraHosts(), nil
	}
	p.clients, p.dirs, p.stopped, p.parts = map[string]*ssh.Client{}, map[string][]string{}, map[string]bool{}, map[string]bool{}
	ok := false
	defer func() {
		if !ok {
			p.closeClients()
		}
	}()
	for _, c := range p.opt.Hosts {
		if c.InsecureIgnoreHostKey {
			opt.Notef("WARNING: host %s's key is not checked (insecure_ignore_host_key): anyone on the path to %s can pose as it", c.Name, c.hostPort())
		}
		opt.Notef("connecting to host %s (%s@%s)", c.Name, c.User, c.hostPort())
		cl, err := c.dial()
		if err != nil {
			return nil, err
		}
		p.clients[c.Name] = cl
		h := &Host{p: p, cfg: c, client: clientAddr(cl)}
		if err := h.readFacts(cl, p.opt.Partitions); err != nil {
			return nil, err
		}
		p.hosts = append(p.hosts, h)
	}
	ok = true
	return p.infraHosts(), nil
}

func (p *Provider) infraHosts() infra.Hosts {
	out := make(infra.Hosts, 0, len(p.hosts))
	for _, h := range p.hosts {
		out = append(out, h)
	}
	return out
}

// clientAddr is the address this machine's connections come from, as the
// host sees them (the ssh connection's local end).
func clientAddr(cl *ssh.Client) string {
	host, _, err := net.SplitHostPort(cl.LocalAddr().String())
	if err != nil {
		return ""
	}
	return host
}

// Down implements infra.Provider: partitions and stopped servers are
// undone and the connections closed. The servers themselves are stopped
// by their owners (deploy), and by their supervisors when a session
// closes.
func (p *Provider) Down() error {
	if p.client("") == nil {
		return nil
	}
	err := p.ResetFaults()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeClients()
	p.hosts = nil
	return err
}

func (p *Provider) closeClients() {
	for _, cl := range p.clients {
		cl.Close()
	}
	p.clients = nil
}

// client is the connection to host name (nil when not up); "" = any.
func (p *Provider) client(name string) *ssh.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name == "" {
		for _, cl := range p.clients {
			return cl
		}
		return nil
	}
	return p.clients[name]
}

// track records that a server runs in dir on host.
func (p *Provider) track(host, dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dirs == nil {
		p.dirs = map[string][]string{}
	}
	for _, d := range p.dirs[host] {
		if d == dir {
			return
		}
	}
	p.dirs[host] = append(p.dirs[host], dir)
}

// Describe implements infra.Describer: the hosts as connected (no
// secret: where keys and passphrases are is not recorded either).
func (p *Provider) Describe() (string, any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var hosts []infra.Facts
	for _, h := range p.hosts {
		hosts = append(hosts, h.factsLocked())
	}
	return "ssh_hosts", map[string]any{"hosts": hosts}
}

// run runs a shell command on host name and returns its output; errors
// carry the command's stderr.
func (p *Provider) run(name, cmd string) (string, error) {
	cl := p.client(name)
	if cl == nil {
		return "", fmt.Errorf("host %s is not connected", name)
	}
	return runOn(cl, cmd)
}

func runOn(cl *ssh.Client, cmd string) (string, error) {
	sess, err := cl.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	var out, stderr strings.Builder
	sess.Stdout, sess.Stderr = &out, &stderr
	if err := sess.Run(cmd); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.String(), fmt.Errorf("%v: %s", err, msg)
	}
	return out.String(), nil
}

// Host is one host reached over ssh.
type Host struct {
	p      *Provider
	cfg    HostConfig
	client string // this machine's address as the host sees it

	vcpus  float64
	memory int64
}

// Name implements infra.Host.
func (h *Host) Name() string { return h.cfg.Name }

// Address implements infra.Host: the address the spec gives; servers
// listen on it.
func (h *Host) Address() string { return h.cfg.Address }

// ClientAddress implements infra.Host.
func (h *Host) ClientAddress() string { return h.client }

// DataDir implements infra.Host: servers keep their data in their
// instance directory, mirrored on the host.
func (h *Host) DataDir() string { return "" }

// PricePerHour implements infra.Host.
func (h *Host) PricePerHour() float64 { return h.cfg.PricePerHour }

// Facts implements infra.Host: what Up read from the host, the spec's
// price, and whether its servers are stopped now.
func (h *Host) Facts() infra.Facts {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	return h.factsLocked()
}

func (h *Host) factsLocked() infra.Facts {
	return infra.Facts{Provider: Name, Name: h.cfg.Name, Address: h.cfg.Address, Type: h.cfg.Type, Region: h.cfg.Region, VCPUs: h.vcpus,
		MemoryBytes: h.memory, PricePerHour: h.cfg.PricePerHour, Stopped: h.p.stopped[h.cfg.Name]}
}

// factsScript prints the CPUs, the memory in KiB, and the programs the
// relay needs that are missing.
const factsScript = `nproc 2>/dev/null || getconf _NPROCESSORS_ONLN
awk '/^MemTotal:/ {print $2}' /proc/meminfo
for p in tar setsid setpriv; do command -v "$p" >/dev/null 2>&1 || printf '%s ' "$p"; done; echo`

// readFacts reads the host's CPUs and memory and checks its programs;
// with partitions, that the ssh user may change iptables rules.
func (h *Host) readFacts(cl *ssh.Client, partitions bool) error {
	out, err := runOn(cl, factsScript)
	if err != nil {
		return fmt.Errorf("host %s: reading its CPUs and memory: %v", h.cfg.Name, err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 {
		return fmt.Errorf("host %s: unexpected answer to the facts script: %q", h.cfg.Name, out)
	}
	n, err1 := strconv.ParseFloat(strings.TrimSpace(lines[0]), 64)
	kib, err2 := strconv.ParseInt(strings.TrimSpace(lines[1]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("host %s: cannot read its CPUs and memory (nproc, /proc/meminfo): %q", h.cfg.Name, out)
	}
	h.vcpus, h.memory = n, kib*1024
	if len(lines) > 2 {
		if missing := strings.Fields(lines[2]); len(missing) > 0 {
			return fmt.Errorf("host %s lacks %s, which running servers there needs; install it there (Debian: apt-get install -y tar util-linux)", h.cfg.Name, strings.Join(missing, ", "))
		}
	}
	if partitions {
		if _, err := runOn(cl, "iptables -S INPUT >/dev/null"); err != nil {
			return fmt.Errorf("host %s: the spec's partition events need iptables as root there, which failed (%v); install iptables (apt-get install -y iptables) and ssh as root, or remove the partition events", h.cfg.Name, err)
		}
	}
	return nil
}

var (
	_ infra.Provider  = (*Provider)(nil)
	_ infra.Faulter   = (*Provider)(nil)
	_ infra.Describer = (*Provider)(nil)
	_ infra.Host      = (*Host)(nil)
)

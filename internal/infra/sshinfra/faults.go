package sshinfra

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/lab"
)

// Faults on ssh hosts. Headroom does not own these machines, so a fault
// acts only on what it started there: kill, stop and continue signal the
// process groups of the servers it runs on the host (found by the pid
// file their supervisors write), never the host's other processes. A
// partition adds iptables rules in a chain of its own (partitionChain),
// which heal and ResetFaults remove; traffic of the ssh sessions
// themselves is let through, or Headroom would lose the host. Limits and
// links (set_cpu, set_volume, set_link, link_down/up) belong to whoever
// owns the machine; the spec refuses them for ssh hosts.

// partitionChain is the iptables chain of the partition rules.
const partitionChain = "HEADROOM-PARTITION"

// Apply implements infra.Faulter.
func (p *Provider) Apply(e infra.Event) (string, error) {
	switch e.Action {
	case lab.ActKill:
		n, err := p.signal(e.Host, "KILL")
		return fmt.Sprintf("killed %d server(s) on %s", n, e.Host), err
	case lab.ActStop:
		n, err := p.signal(e.Host, "STOP")
		if err == nil {
			p.setStopped(e.Host, true)
		}
		return fmt.Sprintf("stopped %d server(s) on %s", n, e.Host), err
	case lab.ActContinue:
		n, err := p.signal(e.Host, "CONT")
		if err == nil {
			p.setStopped(e.Host, false)
		}
		return fmt.Sprintf("continued %d server(s) on %s", n, e.Host), err
	case lab.ActStart:
		return "start the service on " + e.Host, infra.ErrStartService
	case lab.ActPartition:
		if len(e.Groups) != 2 {
			return "", fmt.Errorf("a partition needs two groups of hosts")
		}
		return fmt.Sprintf("partition %v | %v", e.Groups[0], e.Groups[1]), p.partition(e.Groups[0], e.Groups[1])
	case lab.ActHeal:
		return "partitions healed", p.heal()
	}
	return "", fmt.Errorf("%s: %w on ssh hosts (they take kill, stop, continue, start, partition and heal)", e.Action, infra.ErrNotSupported)
}

// ResetFaults implements infra.Faulter: stopped servers continue and
// partitions are healed.
func (p *Provider) ResetFaults() error {
	p.mu.Lock()
	var stopped []string
	for h, s := range p.stopped {
		if s {
			stopped = append(stopped, h)
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, h := range stopped {
		if _, err := p.signal(h, "CONT"); err != nil {
			errs = append(errs, err)
		}
		p.setStopped(h, false)
	}
	errs = append(errs, p.heal())
	return errors.Join(errs...)
}

func (p *Provider) setStopped(host string, v bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped[host] = v
}

// signal sends sig to the process group of every server Headroom runs on
// host and returns how many it reached.
func (p *Provider) signal(host, sig string) (int, error) {
	p.mu.Lock()
	dirs := append([]string(nil), p.dirs[host]...)
	p.mu.Unlock()
	if len(dirs) == 0 {
		return 0, nil
	}
	var b strings.Builder
	b.WriteString("n=0\n")
	for _, d := range dirs {
		f := shellQuote(d + "/" + pidFile)
		fmt.Fprintf(&b, "if [ -f %s ] && kill -s %s -- -\"$(cat %s)\" 2>/dev/null; then n=$((n + 1)); fi\n", f, sig, f)
	}
	b.WriteString("echo $n")
	out, err := p.run(host, b.String())
	if err != nil {
		return 0, fmt.Errorf("host %s: sending %s to its servers: %v", host, sig, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	return n, nil
}

// partition drops the traffic between the hosts of a and those of b
// ("client" is this machine) on every host of both, with iptables.
func (p *Provider) partition(a, b []string) error {
	var errs []error
	for _, side := range [][2][]string{{a, b}, {b, a}} {
		for _, h := range side[0] {
			if h == "client" {
				continue // this machine is cut off by the hosts' rules
			}
			addrs, err := p.addresses(h, side[1])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, p.dropFrom(h, addrs))
		}
	}
	return errors.Join(errs...)
}

// addresses are the addresses of names as host sees them ("client" =
// this machine's address on host's connection).
func (p *Provider) addresses(host string, names []string) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, n := range names {
		for _, h := range p.hosts {
			switch {
			case n == "client" && h.cfg.Name == host:
				out = append(out, h.client)
			case h.cfg.Name == n:
				out = append(out, h.cfg.Address)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("partition: none of %v is a host of the infra section", names)
	}
	return out, nil
}

// dropFrom makes host drop traffic to and from addrs, except its ssh
// sessions.
func (p *Provider) dropFrom(host string, addrs []string) error {
	port := 22
	p.mu.Lock()
	for _, h := range p.hosts {
		if h.cfg.Name == host {
			port = h.cfg.port()
		}
	}
	p.mu.Unlock()
	c := partitionChain
	var b strings.Builder
	fmt.Fprintf(&b, "set -e\niptables -N %s 2>/dev/null || true\n", c)
	for _, hook := range []string{"INPUT", "OUTPUT"} {
		fmt.Fprintf(&b, "iptables -C %s -j %s 2>/dev/null || iptables -I %s -j %s\n", hook, c, hook, c)
	}
	for _, a := range addrs {
		q := shellQuote(a)
		fmt.Fprintf(&b, "iptables -A %s -s %s -p tcp --dport %d -j RETURN\n", c, q, port)
		fmt.Fprintf(&b, "iptables -A %s -d %s -p tcp --sport %d -j RETURN\n", c, q, port)
		fmt.Fprintf(&b, "iptables -A %s -s %s -j DROP\niptables -A %s -d %s -j DROP\n", c, q, c, q)
	}
	if _, err := p.run(host, b.String()); err != nil {
		return fmt.Errorf("host %s: partition with iptables (it needs root and the iptables package there): %v", host, err)
	}
	p.mu.Lock()
	p.parts[host] = true
	p.mu.Unlock()
	return nil
}

// heal removes the partition chain from every host that has one.
func (p *Provider) heal() error {
	p.mu.Lock()
	var hosts []string
	for h, on := range p.parts {
		if on {
			hosts = append(hosts, h)
		}
	}
	p.mu.Unlock()
	c := partitionChain
	script := fmt.Sprintf("iptables -D INPUT -j %s 2>/dev/null; iptables -D OUTPUT -j %s 2>/dev/null; iptables -F %s 2>/dev/null; iptables -X %s 2>/dev/null; true", c, c, c, c)
	var errs []error
	for _, h := range hosts {
		if _, err := p.run(h, script); err != nil {
			errs = append(errs, fmt.Errorf("host %s: removing the partition rules: %v", h, err))
			continue
		}
		p.mu.Lock()
		p.parts[h] = false
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}

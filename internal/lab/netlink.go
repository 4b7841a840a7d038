package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"time"
)

// The lab's network is made with the iproute2 and iptables commands: they
// are on every machine that can run namespaces, and their error messages
// say what the kernel refused.

// run runs a command and returns its error with the command's own message.
func run(name string, args ...string) error {
	_, err := output(name, args...)
	return err
}

func output(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s is not installed; install it (Debian: apt-get install %s)", name, packageOf(name))
		}
		return out, fmt.Errorf("%s %s: %s", name, strings.Join(args, " "), msg)
	}
	return out, nil
}

func packageOf(cmd string) string {
	switch cmd {
	case "ip", "tc":
		return "iproute2"
	case "iptables":
		return "iptables"
	case "nsenter", "setpriv":
		return "util-linux"
	}
	return cmd
}

// ipNS runs `ip -n ns args...` (ns "" = the machine's own namespace).
func ipNS(ns string, args ...string) error {
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	return run("ip", args...)
}

// tcNS runs tc inside namespace ns ("" = the machine's).
func tcNS(ns string, args ...string) error {
	if ns != "" {
		return run("ip", append([]string{"netns", "exec", ns, "tc"}, args...)...)
	}
	return run("tc", args...)
}

// iptablesNS runs iptables inside namespace ns.
func iptablesNS(ns string, args ...string) error {
	return run("ip", append([]string{"netns", "exec", ns, "iptables", "-w"}, args...)...)
}

// shape limits what leaves dev (in namespace ns) to mbit Mbit/s with a
// token bucket; mbit 0 removes the limit. The bucket holds 10 ms of the
// rate (at least 32 KiB, so that segmentation-offloaded packets pass).
func shape(ns, dev string, mbit float64) error {
	if mbit <= 0 {
		err := tcNS(ns, "qdisc", "del", "dev", dev, "root")
		if err != nil && (strings.Contains(err.Error(), "No such file") || strings.Contains(err.Error(), "Cannot delete qdisc with handle of zero") || strings.Contains(err.Error(), "Invalid handle")) {
			return nil
		}
		return err
	}
	bytesPerSec := mbit * 1e6 / 8
	burst := int64(bytesPerSec / 100)
	if burst < 32<<10 {
		burst = 32 << 10
	}
	// The queue holds 100 ms of the rate, and at least a few
	// segmentation-offloaded (64 KiB) packets: a shorter queue drops whole
	// offloaded packets, TCP backs off, and the link runs below its rate.
	limit := int64(bytesPerSec / 10)
	if limit < 256<<10 {
		limit = 256 << 10
	}
	return tcNS(ns, "qdisc", "replace", "dev", dev, "root", "tbf",
		"rate", fmt.Sprintf("%dkbit", int64(mbit*1000)),
		"burst", fmt.Sprintf("%d", burst), "limit", fmt.Sprintf("%d", limit))
}

// usedPrefixes lists the IPv4 networks this machine already uses
// (addresses and routes in every table), so that a lab never takes one.
func usedPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	addrs, err := output("ip", "-4", "-o", "addr", "show")
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(addrs), "\n") {
		f := strings.Fields(l)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "inet" {
				if p, err := netip.ParsePrefix(f[i+1]); err == nil {
					out = append(out, p.Masked())
				}
			}
		}
	}
	routes, err := output("ip", "-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(routes), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if dst == "default" || dst == "broadcast" || dst == "local" || dst == "unreachable" || dst == "blackhole" {
			if dst == "default" || len(f) < 2 {
				continue
			}
			dst = f[1]
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if p, err := netip.ParsePrefix(dst); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out, nil
}

// pickSubnet returns the first /24 in 10.201.0.0/16 that overlaps nothing
// in used.
func pickSubnet(used []netip.Prefix) (netip.Prefix, error) {
	for third := 0; third < 256; third++ {
		cand := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 201, byte(third), 0}), 24)
		free := true
		for _, u := range used {
			if u.Overlaps(cand) {
				free = false
				break
			}
		}
		if free {
			return cand, nil
		}
	}
	return netip.Prefix{}, errors.New("every /24 network in 10.201.0.0/16 is in use on this machine; take a lab down (headroom lab down --all) or free addresses in that range")
}

// hostAddr is the address of the i-th host (0-based) in subnet: .10 on.
func hostAddr(subnet netip.Prefix, i int) netip.Addr {
	a := subnet.Addr().As4()
	a[3] = byte(10 + i)
	return netip.AddrFrom4(a)
}

// gatewayAddr is the machine's own address in the lab (.1, on the bridge).
func gatewayAddr(subnet netip.Prefix) netip.Addr {
	a := subnet.Addr().As4()
	a[3] = 1
	return netip.AddrFrom4(a)
}

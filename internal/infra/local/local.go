// Package local is the infra provider of this machine: one host, reached
// on loopback, with no limits of its own and no price unless one is given.
// It is the provider of every campaign without a lab: section.
package local

import (
	"context"
	"os"
	"os/exec"
	"syscall"

	"github.com/headroom-dev/headroom/internal/hostinfo"
	"github.com/headroom-dev/headroom/internal/infra"
)

// Name is the provider's name and its host's.
const Name = "local"

// Options describe this machine as a host.
type Options struct {
	// Address servers listen on and clients dial; default 127.0.0.1.
	Address string
	// PricePerHour is what this machine costs per hour, for cost per
	// request figures (default 0).
	PricePerHour float64
}

// Provider gives this machine as the only host.
type Provider struct {
	host *Host
}

// New returns the provider of this machine.
func New(opt Options) *Provider {
	if opt.Address == "" {
		opt.Address = "127.0.0.1"
	}
	return &Provider{host: &Host{addr: opt.Address, price: opt.PricePerHour}}
}

// Name implements infra.Provider.
func (p *Provider) Name() string { return Name }

// Up implements infra.Provider: this machine is always up.
func (p *Provider) Up(context.Context, infra.UpOptions) (infra.Hosts, error) {
	return infra.Hosts{p.host}, nil
}

// Down implements infra.Provider: there is nothing to take down.
func (p *Provider) Down() error { return nil }

// Host is this machine.
type Host struct {
	addr  string
	price float64
}

// Name implements infra.Host.
func (h *Host) Name() string { return Name }

// Address implements infra.Host.
func (h *Host) Address() string { return h.addr }

// ClientAddress implements infra.Host: Headroom connects from the same
// machine, over the same address.
func (h *Host) ClientAddress() string { return h.addr }

// DataDir implements infra.Host: this machine has no volume of its own
// for servers; they keep their data in their instance directories.
func (h *Host) DataDir() string { return "" }

// Command implements infra.Host: the command runs here, as uid:gid when
// that is not this process's own user (which needs root).
func (h *Host) Command(cmd *exec.Cmd, uid, gid int) error {
	if uid == os.Getuid() && gid == os.Getgid() {
		return nil
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return nil
}

// Monitor implements infra.Host: this machine is sampled by the campaign
// itself, with the spec's monitor settings.
func (h *Host) Monitor() (infra.Monitor, error) { return nil, nil }

// Facts implements infra.Host: the machine's CPUs and memory, no limits.
func (h *Host) Facts() infra.Facts {
	f := hostinfo.Collect()
	return infra.Facts{Provider: Name, Name: Name, Address: h.addr, VCPUs: float64(f.CPUs),
		MemoryBytes: f.MemoryKiB * 1024, PricePerHour: h.price}
}

// PricePerHour implements infra.Host.
func (h *Host) PricePerHour() float64 { return h.price }

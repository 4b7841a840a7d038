// Package infra is the seam between a campaign and the machines it runs on.
// A Provider gives hosts (this machine, an emulated lab region, later hosts
// reached over ssh); a Host is where a managed server runs: it has a name,
// an address, a way to run a command on it, a monitor, facts and a price.
// What only some providers can do (apply faults, change limits, add or
// remove hosts while running) is a small interface of its own, found by
// type assertion, so that a provider implements only what it supports and
// the campaign never needs to know which provider it has.
package infra

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// Provider gives the hosts of one campaign (or treatment).
type Provider interface {
	// Name says what kind of infrastructure this is ("local", "lab").
	Name() string
	// Up brings the hosts up, or takes over hosts already up with the
	// same definition, and returns them in their defined order.
	Up(ctx context.Context, opt UpOptions) (Hosts, error)
	// Down releases what Up brought up; hosts the spec keeps, or that
	// another process brought up, stay. Down after a failed or no Up does
	// nothing.
	Down() error
}

// UpOptions tune Provider.Up.
type UpOptions struct {
	// Note hears one line per step (bringing a host up); nil = quiet.
	Note func(string)
	// Campaign and Results say who brings the hosts up, for providers that
	// record an owner (the lab: lab status names it).
	Campaign, Results string
}

// Notef formats a line for o.Note, when it is set.
func (o UpOptions) Notef(format string, args ...any) {
	if o.Note != nil {
		o.Note(fmt.Sprintf(format, args...))
	}
}

// Host is one machine of a provider.
type Host interface {
	// Name is the host's name in the spec ("db1"), or "local".
	Name() string
	// Address is where servers on the host listen and clients dial them.
	Address() string
	// ClientAddress is the address Headroom's own connections to the
	// host come from, which a server must let in (grants, pg_hba).
	ClientAddress() string
	// DataDir is a directory on the host's volume for a server's data;
	// "" when the host has no volume of its own (the server then keeps
	// its data in its instance directory).
	DataDir() string
	// Command rewrites cmd so that it runs on the host as uid:gid. cmd's
	// Dir, Env, Stdout, Stderr and SysProcAttr (other than Credential)
	// are kept.
	Command(cmd *exec.Cmd, uid, gid int) error
	// Monitor opens a sampler of the host's resources, its samples tagged
	// with the host's name. It returns nil without an error for this
	// machine, which the campaign samples itself with the spec's monitor
	// settings.
	Monitor() (Monitor, error)
	// Facts describe the host and the limits in force now.
	Facts() Facts
	// PricePerHour is what the host costs per hour, volumes included
	// (0 = free or unknown).
	PricePerHour() float64
}

// Monitor samples a host until it is closed.
type Monitor interface {
	monitor.Source
	Close()
}

// Facts describe a host as it is now.
type Facts struct {
	Provider string `json:"provider"` // "local", "lab"
	// Group is the provider's set of hosts the host belongs to (the lab's
	// name); "" for this machine.
	Group   string `json:"group,omitempty"`
	Name    string `json:"name"`
	Address string `json:"address"`
	Type    string `json:"type,omitempty"` // instance type; "" for this machine
	// Region is the host's region label (infra.hosts[].region); results
	// group the load agents on the host by it.
	Region      string   `json:"region,omitempty"`
	VCPUs       float64  `json:"vcpus"`        // CPUs it may use
	MemoryBytes int64    `json:"memory_bytes"` // 0 = unknown
	NetworkMbit float64  `json:"network_mbit"` // 0 = not limited
	Volumes     []Volume `json:"volumes,omitempty"`
	// PricePerHour is the instance's price; each volume has its own
	// monthly price (Host.PricePerHour adds them up).
	PricePerHour float64 `json:"price_per_hour"`
	Stopped      bool    `json:"stopped,omitempty"`   // its processes are stopped (a fault)
	LinkDown     bool    `json:"link_down,omitempty"` // its network link is down (a fault)
	// Removed: the host was released (Scaler.RemoveHost); its last facts
	// are kept, stopped, with its link down and no price.
	Removed bool `json:"removed,omitempty"`
}

// Volume is a block volume of a host, with the limits in force now.
type Volume struct {
	Name         string  `json:"name"`
	Type         string  `json:"type"`
	SizeGiB      float64 `json:"size_gib"`
	IOPS         float64 `json:"iops"`  // 0 = not limited
	MiBps        float64 `json:"mibps"` // 0 = not limited
	MonthlyPrice float64 `json:"monthly_price"`
	Stalled      bool    `json:"stalled,omitempty"` // serves no I/O (a stall_disk fault)
}

// Hosts are a provider's hosts in their defined order.
type Hosts []Host

// Get returns the host of that name, or an error that lists the names.
func (hs Hosts) Get(name string) (Host, error) {
	names := make([]string, 0, len(hs))
	for _, h := range hs {
		if h.Name() == name {
			return h, nil
		}
		names = append(names, h.Name())
	}
	return nil, fmt.Errorf("there is no host %q; the hosts are %s", name, strings.Join(names, ", "))
}

// Names lists the hosts' names.
func (hs Hosts) Names() []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.Name())
	}
	return out
}

// Event is a fault or a change applied to hosts at run time. The spec's
// events: section uses the lab's vocabulary, which every provider that
// applies events shares.
type Event = lab.Event

// ErrStartService is returned by Faulter.Apply for a start event: starting
// a service again is up to whoever runs it (the campaign restarts its
// managed server), not the provider.
var ErrStartService = lab.ErrStartService

// ErrNotSupported is wrapped by errors of capabilities a provider declares
// but cannot do yet.
var ErrNotSupported = errors.New("not supported yet")

// Faulter applies events to a provider's hosts while a campaign runs.
type Faulter interface {
	// Apply carries out e now and returns a one-line description of what
	// it did, for the record.
	Apply(e Event) (string, error)
	// ResetFaults puts every host back as defined: limits, links,
	// partitions, stopped processes.
	ResetFaults() error
}

// Resizer changes a host's limits while it runs.
type Resizer interface {
	SetCPU(host string, vcpus float64) error
	SetVolume(host string, iops, mibps float64) error
	SetLink(host string, mbit float64) error
}

// HostSpec asks for a new host: its name and instance type.
type HostSpec struct {
	Name string
	Type string
	IOPS float64 // provisioned IOPS of its volume; 0 = as the provider decides (the lab: like its peers')
}

// Scaler adds and removes hosts while a campaign runs.
type Scaler interface {
	AddHost(ctx context.Context, h HostSpec) (Host, error)
	RemoveHost(ctx context.Context, name string) error
}

// Describer is a provider that records what it brought up in the results
// store: Kind is the event kind ("lab") and Detail its JSON-encodable
// description (hosts, limits, prices).
type Describer interface {
	Describe() (kind string, detail any)
}

// Shipper is a host that does not share this machine's files (an ssh
// host): a program of this machine runs there only once copied there.
// Lab hosts and this machine see the same files and are not Shippers.
type Shipper interface {
	// HasExecutable reports whether path is an executable file on the
	// host.
	HasExecutable(path string) (bool, error)
	// Ship copies the local executable file to the host, unless an
	// identical copy is there already, and returns its path there; note
	// hears what is copied where and how far it got (nil = quiet). The
	// file is taken to be built for this program's OS and architecture:
	// a host of another fails with an *ArchError before anything is
	// copied.
	Ship(local string, note func(string)) (string, error)
}

// ArchError says that a program of this machine cannot run on a host of
// another OS or architecture.
type ArchError struct {
	Host   string
	Uname  string // the host's `uname -s -m`
	Remote string // the host's GOOS/GOARCH ("" = none Go knows)
	Local  string // this program's GOOS/GOARCH
}

func (e *ArchError) Error() string {
	remote := e.Remote
	if remote == "" {
		remote = "unknown to Go"
	}
	return fmt.Sprintf("host %s runs %s (%s) and this program is built for %s", e.Host, e.Uname, remote, e.Local)
}

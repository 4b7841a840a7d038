package campaign

import (
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/infra"
)

// plainHost is a host that shares this machine's files (a lab host).
type plainHost struct {
	infra.Host
	name string
}

func (h *plainHost) Name() string { return h.name }

// shipHost is a host that does not (an ssh host): it has the files in
// has, and Ship answers path or err.
type shipHost struct {
	plainHost
	has     map[string]bool
	shipped []string
	path    string
	err     error
}

func (h *shipHost) HasExecutable(p string) (bool, error) { return h.has[p], nil }
func (h *shipHost) Ship(local string, note func(string)) (string, error) {
	h.shipped = append(h.shipped, local)
	return h.path, h.err
}

// Which program an agent runs: the given or own binary on local and lab
// hosts; on an ssh host the given binary when it is there, otherwise a
// copy of this program; another architecture fails with one sentence
// naming the host, both architectures and the fix.
func TestAgentProgram(t *testing.T) {
	const self, given, cached = "/usr/bin/headroom-self", "/opt/headroom", "/root/.cache/headroom/headroom-0123"
	arch := &infra.ArchError{Host: "ssh1", Uname: "Linux aarch64", Remote: "linux/arm64", Local: "linux/amd64"}
	for _, c := range []struct {
		what, host, bin string
		given           bool
		has             bool  // the ssh host has the given binary
		shipErr         error // Ship's error
		want            string
		ships           bool
		err             string
	}{
		{what: "local", host: "local", bin: self, want: self},
		{what: "lab host", host: "lab1", bin: given, given: true, want: given},
		{what: "ssh, no binary", host: "ssh1", bin: self, want: cached, ships: true},
		{what: "ssh, binary there", host: "ssh1", bin: given, given: true, has: true, want: given},
		{what: "ssh, binary absent", host: "ssh1", bin: given, given: true, want: cached, ships: true},
		{what: "ssh, other arch", host: "ssh1", bin: self, shipErr: arch, ships: true,
			err: "load agent on ssh1: host ssh1 runs Linux aarch64 (linux/arm64) and this program is built for linux/amd64, so it cannot be copied there; install headroom for linux/arm64 on ssh1 and set load.agents.binary to its path there"},
		{what: "ssh, binary absent, other arch", host: "ssh1", bin: given, given: true, shipErr: arch, ships: true,
			err: "so it cannot be copied there; install headroom for linux/arm64 at /opt/headroom on ssh1"},
		{what: "unknown host", host: "nope", bin: self, err: `there is no host "nope"`},
	} {
		sh := &shipHost{plainHost: plainHost{name: "ssh1"}, has: map[string]bool{given: c.has}, path: cached, err: c.shipErr}
		hosts := infra.Hosts{&plainHost{name: "lab1"}, sh}
		var notes []string
		got, err := agentProgram(hosts, c.host, c.bin, c.given, self, func(s string) { notes = append(notes, s) })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want an error with %q", c.what, got, err, c.err)
			}
		} else if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.what, got, err, c.want)
		}
		if shipped := len(sh.shipped) > 0; shipped != c.ships || shipped && sh.shipped[0] != self {
			t.Errorf("%s: shipped %v", c.what, sh.shipped)
		}
		if c.given && !c.has && c.host == "ssh1" && (len(notes) == 0 || !strings.Contains(notes[0], "load.agents.binary /opt/headroom is not on host ssh1")) {
			t.Errorf("%s: notes %q", c.what, notes)
		}
	}
}

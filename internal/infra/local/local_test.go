package local

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/infra"
)

func TestLocalHost(t *testing.T) {
	p := New(Options{PricePerHour: 0.25})
	var _ infra.Provider = p
	hosts, err := p.Up(context.Background(), infra.UpOptions{})
	if err != nil || len(hosts) != 1 {
		t.Fatalf("hosts %v, %v", hosts, err)
	}
	h, err := hosts.Get(Name)
	if err != nil {
		t.Fatal(err)
	}
	if h.Address() != "127.0.0.1" || h.ClientAddress() != "127.0.0.1" || h.DataDir() != "" || h.PricePerHour() != 0.25 {
		t.Errorf("host %s: address %s, client %s, data %q, price %v", h.Name(), h.Address(), h.ClientAddress(), h.DataDir(), h.PricePerHour())
	}
	if _, err := hosts.Get("db1"); err == nil || !strings.Contains(err.Error(), `no host "db1"; the hosts are local`) {
		t.Errorf("unknown host: %v", err)
	}
	f := h.Facts()
	if f.Provider != Name || f.VCPUs != float64(runtime.NumCPU()) || f.MemoryBytes <= 0 || f.NetworkMbit != 0 || f.PricePerHour != 0.25 {
		t.Errorf("facts %+v", f)
	}
	if m, err := h.Monitor(); m != nil || err != nil {
		t.Errorf("this machine's monitor is the campaign's own: %v, %v", m, err)
	}
	if err := p.Down(); err != nil {
		t.Fatal(err)
	}
}

// A command wrapped for the local host runs here, as the user asked for.
func TestLocalCommand(t *testing.T) {
	h := New(Options{}).host
	cmd := exec.Command("id", "-u")
	if err := h.Command(cmd, os.Getuid(), os.Getgid()); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(os.Getuid()) {
		t.Fatalf("id -u as this user: %q, %v", out, err)
	}
	if os.Geteuid() != 0 {
		t.Skip("running as another user needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	cmd = exec.Command("id", "-u")
	if err := h.Command(cmd, uid, gid); err != nil {
		t.Fatal(err)
	}
	out, err = cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != nobody.Uid {
		t.Fatalf("id -u as nobody: %q, %v", out, err)
	}
}

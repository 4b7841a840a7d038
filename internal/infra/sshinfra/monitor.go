package sshinfra

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/monitor/procfs"
)

// Monitoring an ssh host. One session per host runs a loop that prints
// the host's /proc counters (CPU, memory, disks, network) each time it
// reads a line; each Sample asks once and writes what comes back into a
// private copy of those files, which internal/monitor/procfs's Sampler
// reads as it reads this machine's /proc. The parsing, the rates and the
// metric names are therefore exactly the local monitor's.

// procFiles are the files sampled on the host.
var procFiles = []string{"/proc/stat", "/proc/meminfo", "/proc/diskstats", "/proc/net/dev"}

const (
	fileMark = "@@headroom-file "
	endMark  = "@@headroom-end"
)

// monitorScript first lists the whole disks (/sys/block), then prints
// procFiles between marks for every line it reads.
var monitorScript = `ls /sys/block; echo ` + endMark + `
while read -r _; do
  for f in ` + strings.Join(procFiles, " ") + `; do echo "` + fileMark + `$f"; cat "$f"; done
  echo ` + endMark + `
done`

// sampleTimeout bounds one round trip; a host that does not answer in
// time gives an error for that sample, not a stalled campaign.
const sampleTimeout = 5 * time.Second

// Monitor implements infra.Host: the host's CPU, memory, disks and
// network interfaces sampled over a session of its own.
func (h *Host) Monitor() (infra.Monitor, error) {
	cl := h.p.client(h.cfg.Name)
	if cl == nil {
		return nil, fmt.Errorf("host %s is not connected", h.cfg.Name)
	}
	return openMonitor(cl, h.cfg.Name)
}

type remoteMonitor struct {
	host   string
	sess   *ssh.Session
	ask    io.WriteCloser
	blocks chan map[string][]byte
	done   chan struct{} // closed by Close: the reader stops passing blocks
	root   string

	mu      sync.Mutex
	sampler *procfs.Sampler
	closed  bool
}

func openMonitor(cl *ssh.Client, host string) (_ *remoteMonitor, err error) {
	sess, err := cl.NewSession()
	if err != nil {
		return nil, fmt.Errorf("host %s: opening the monitor's session: %v", host, err)
	}
	ask, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	if err := sess.Start(monitorScript); err != nil {
		sess.Close()
		return nil, fmt.Errorf("host %s: starting the monitor: %v", host, err)
	}
	root, err := os.MkdirTemp("", "headroom-ssh-"+host+"-")
	if err != nil {
		sess.Close()
		return nil, err
	}
	m := &remoteMonitor{host: host, sess: sess, ask: ask, blocks: make(chan map[string][]byte, 1), done: make(chan struct{}), root: root}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	rd := bufio.NewReader(out)
	disks, err := readBlock(rd)
	if err != nil {
		return nil, fmt.Errorf("host %s: listing its disks: %v", host, err)
	}
	for _, d := range strings.Fields(string(disks[""])) {
		if err := os.MkdirAll(filepath.Join(root, "sys/block", filepath.Base(d)), 0o755); err != nil {
			return nil, err
		}
	}
	go m.read(rd)
	if err := m.fetch(); err != nil {
		return nil, err
	}
	m.sampler, err = procfs.New(procfs.Config{Host: host, Root: root, CPU: true, Memory: true, AllDisks: true, AllInterfaces: true})
	if err != nil {
		return nil, fmt.Errorf("host %s: %v", host, err)
	}
	return m, nil
}

// read passes every block the host prints to Sample, until the session
// ends.
func (m *remoteMonitor) read(rd *bufio.Reader) {
	defer close(m.blocks)
	for {
		b, err := readBlock(rd)
		if err != nil {
			return
		}
		select {
		case m.blocks <- b:
		case <-m.done:
			return
		}
	}
}

// readBlock reads up to the end mark: the files after their marks, by
// path; text before any mark is under "".
func readBlock(rd *bufio.Reader) (map[string][]byte, error) {
	out := map[string][]byte{}
	cur := ""
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil, err
		}
		switch {
		case strings.TrimRight(line, "\n") == endMark:
			return out, nil
		case strings.HasPrefix(line, fileMark):
			cur = strings.TrimSpace(strings.TrimPrefix(line, fileMark))
			out[cur] = out[cur][:0]
		default:
			out[cur] = append(out[cur], line...)
		}
	}
}

// fetch asks the host for its counters once and writes them into the
// private copy (in place, so the Sampler's open files see the new
// content).
func (m *remoteMonitor) fetch() error {
	if _, err := io.WriteString(m.ask, "\n"); err != nil {
		return fmt.Errorf("host %s: the monitor's session ended: %v", m.host, err)
	}
	select {
	case b, ok := <-m.blocks:
		if !ok {
			return fmt.Errorf("host %s: the monitor's session ended", m.host)
		}
		for _, f := range procFiles {
			p := filepath.Join(m.root, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, b[f], 0o644); err != nil {
				return err
			}
		}
		return nil
	case <-time.After(sampleTimeout):
		return fmt.Errorf("host %s did not send its counters within %v", m.host, sampleTimeout)
	}
}

// Sample implements monitor.Source.
func (m *remoteMonitor) Sample(at time.Time) ([]monitor.Sample, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("host %s: the monitor is closed", m.host)
	}
	if err := m.fetch(); err != nil {
		return nil, err
	}
	return m.sampler.Sample(at)
}

// Close implements infra.Monitor.
func (m *remoteMonitor) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	close(m.done)
	m.ask.Close()
	m.sess.Close()
	if m.sampler != nil {
		m.sampler.Close()
	}
	os.RemoveAll(m.root)
}

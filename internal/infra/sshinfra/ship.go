package sshinfra

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
)

// Programs of this machine on an ssh host (the load agents' headroom):
// the file is copied over the provider's session into a per-user cache
// there, ${XDG_CACHE_HOME:-~/.cache}/headroom/headroom-<sha256 prefix>,
// named by its content so that two builds never share a name and an
// identical copy is found by name and checked by sha256sum before
// anything is sent again. A copy is written under a temporary name,
// checked and renamed, so a half-copied file is never run; and it is made
// only when the host's `uname -s -m` is this program's GOOS/GOARCH.

// unameCommand prints the host's OS and machine; a variable so that a
// test can fake another architecture (export_test.go).
var unameCommand = "uname -s -m"

// shipProbeScript prints the host's `uname -s -m`, the cache directory,
// the sha256 of the program already there under $1 ("" = none; "nosha" =
// sha256sum is missing), and "gzip" when the host can decompress. It
// also marks $1 as used now (its modification time) and removes the other
// copies there that no campaign used for two weeks, so that a host does
// not collect one copy per build.
func shipProbeScript() string {
	return unameCommand + `
dir="${XDG_CACHE_HOME:-$HOME/.cache}/headroom"
echo "$dir"
f="$dir/$1"
if ! command -v sha256sum >/dev/null 2>&1; then echo nosha
elif [ -f "$f" ] && [ -x "$f" ]; then sha256sum <"$f"; touch -c "$f" 2>/dev/null
else echo
fi
if command -v gzip >/dev/null 2>&1; then echo gzip; fi
if [ -d "$dir" ] && command -v find >/dev/null 2>&1; then
  find "$dir" -maxdepth 1 -type f -name 'headroom-????????????????' ! -name "$1" -mtime +` + pruneDays + ` -exec rm -f {} + 2>/dev/null
fi
true`
}

// pruneDays: find -mtime +13 matches files 14 or more days old.
const pruneDays = "13"

// shipCopyScript receives the program on stdin into a temporary file
// next to its final name ($1 the directory, $2 the name, $3 its sha256,
// $4 "gzip" when it comes compressed), checks it, makes it executable and
// renames it into place.
const shipCopyScript = `set -e
dir=$1 name=$2 sum=$3 z=$4
mkdir -p "$dir"
tmp="$dir/.$name.tmp.$$"
trap 'rm -f "$tmp"' EXIT
if [ "$z" = gzip ]; then gzip -dc >"$tmp"; else cat >"$tmp"; fi
got=$(sha256sum <"$tmp")
got=${got%% *}
if [ "$got" != "$sum" ]; then echo "the copy's sha256 is $got, not $sum" >&2; exit 1; fi
chmod 0755 "$tmp"
mv -f "$tmp" "$dir/$name"`

// shipPlan is what Ship does on a host.
type shipPlan struct {
	dir  string // the cache directory there
	path string // the program there
	copy bool   // false: an identical copy is there already
	gzip bool   // the host decompresses: the copy goes compressed
}

// planShip decides from the host's answer to shipProbeScript whether the
// program (localSum, built for localOSArch) is copied to the host, is
// there already, or cannot run there.
func planShip(host, name, answer, localSum, localOSArch string) (shipPlan, error) {
	lines := strings.Split(strings.TrimRight(answer, "\n"), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[1]) == "" {
		return shipPlan{}, fmt.Errorf("host %s: unexpected answer when looking for its architecture and cache directory: %q", host, answer)
	}
	uname := strings.Join(strings.Fields(lines[0]), " ")
	if remote := goOSArch(uname); remote != localOSArch {
		return shipPlan{}, &infra.ArchError{Host: host, Uname: uname, Remote: remote, Local: localOSArch}
	}
	p := shipPlan{dir: strings.TrimSpace(lines[1])}
	p.path = p.dir + "/" + name
	sum := ""
	if len(lines) > 2 {
		sum, _, _ = strings.Cut(strings.TrimSpace(lines[2]), " ")
	}
	if sum == "nosha" {
		return shipPlan{}, fmt.Errorf("host %s lacks sha256sum, which copying a program there needs to check it; install it there (Debian: apt-get install -y coreutils)", host)
	}
	p.copy = sum != localSum
	p.gzip = len(lines) > 3 && strings.TrimSpace(lines[3]) == "gzip"
	return p, nil
}

// goOSArch maps `uname -s -m` to Go's GOOS/GOARCH; "" when Go has no
// name for it.
func goOSArch(uname string) string {
	sys, machine, _ := strings.Cut(uname, " ")
	goos := map[string]string{"Linux": "linux", "Darwin": "darwin", "FreeBSD": "freebsd", "OpenBSD": "openbsd", "NetBSD": "netbsd"}[sys]
	var goarch string
	switch machine {
	case "x86_64", "amd64":
		goarch = "amd64"
	case "aarch64", "arm64", "aarch64_be":
		goarch = "arm64"
		if machine == "aarch64_be" {
			goarch = "arm64be"
		}
	case "i386", "i486", "i586", "i686", "i86pc":
		goarch = "386"
	case "armv5l", "armv6l", "armv7l", "armv8l", "arm":
		goarch = "arm"
	case "ppc64le", "ppc64", "s390x", "riscv64", "mips", "mipsle", "mips64", "mips64le":
		goarch = machine
	case "loongarch64":
		goarch = "loong64"
	}
	if goos == "" || goarch == "" {
		return ""
	}
	return goos + "/" + goarch
}

// HasExecutable implements infra.Shipper.
func (h *Host) HasExecutable(path string) (bool, error) {
	out, err := h.p.run(h.cfg.Name, "if [ -f "+shellQuote(path)+" ] && [ -x "+shellQuote(path)+" ]; then echo yes; fi")
	if err != nil {
		return false, fmt.Errorf("host %s: looking for %s there: %v", h.cfg.Name, path, err)
	}
	return strings.TrimSpace(out) == "yes", nil
}

// Ship implements infra.Shipper (see shipProbeScript).
func (h *Host) Ship(local string, note func(string)) (string, error) {
	if note == nil {
		note = func(string) {}
	}
	sum, size, err := fileSHA256(local)
	if err != nil {
		return "", err
	}
	name := "headroom-" + sum[:16]
	out, err := h.p.run(h.cfg.Name, "sh -c "+shellQuote(shipProbeScript())+" headroom-ship "+shellQuote(name))
	if err != nil {
		return "", fmt.Errorf("host %s: reading its architecture and cache directory: %v", h.cfg.Name, err)
	}
	plan, err := planShip(h.cfg.Name, name, out, sum, runtime.GOOS+"/"+runtime.GOARCH)
	if err != nil {
		return "", err
	}
	if !plan.copy {
		note(fmt.Sprintf("host %s has %s already (same sha256): not copied again", h.cfg.Name, plan.path))
		return plan.path, nil
	}
	note(fmt.Sprintf("copying %s (%s) to host %s:%s", local, megabytes(size), h.cfg.Name, plan.path))
	if err := h.copyFile(local, size, plan, sum, note); err != nil {
		return "", fmt.Errorf("host %s: copying %s to %s there: %v", h.cfg.Name, local, plan.path, err)
	}
	return plan.path, nil
}

// copyFile streams local to shipCopyScript, compressed when the host
// can decompress (a Go binary shrinks by half or more, and the link may
// be slow), noting its progress every few seconds.
func (h *Host) copyFile(local string, size int64, plan shipPlan, sum string, note func(string)) error {
	cl := h.p.client(h.cfg.Name)
	if cl == nil {
		return fmt.Errorf("host %s is not connected", h.cfg.Name)
	}
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	sess, err := cl.NewSession()
	if err != nil {
		return err
	}
	defer sess.Close()
	cr := &countingReader{r: f}
	sess.Stdin = cr
	z, sent := "plain", &countingWriter{}
	if plan.gzip {
		pr, pw := io.Pipe()
		go func() {
			// Buffered, so that the session sends full packets rather
			// than one per compressed block.
			bw := bufio.NewWriterSize(io.MultiWriter(pw, sent), 256<<10)
			zw, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
			_, err := io.Copy(zw, cr)
			if cerr := zw.Close(); err == nil {
				err = cerr
			}
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			pw.CloseWithError(err)
		}()
		defer pr.Close() // ends the compressor if the session failed first
		sess.Stdin, z = pr, "gzip"
	}
	var stderr strings.Builder
	sess.Stderr = &stderr
	start := time.Now()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(3 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n := cr.n.Load()
				note(fmt.Sprintf("copying to host %s: %d%% (%s of %s)", h.cfg.Name, n*100/max(size, 1), megabytes(n), megabytes(size)))
			}
		}
	}()
	err = sess.Run("sh -c " + shellQuote(shipCopyScript) + " headroom-ship " + shellQuote(plan.dir) + " " + shellQuote(filepath.Base(plan.path)) + " " + sum + " " + z)
	close(done)
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	secs := time.Since(start).Seconds()
	how := ""
	if plan.gzip {
		how = ", " + megabytes(sent.n.Load()) + " sent compressed"
	}
	note(fmt.Sprintf("copied %s to host %s in %.1f s (%.1f MB/s%s)", megabytes(size), h.cfg.Name, secs, float64(size)/1e6/max(secs, 1e-3), how))
	return nil
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// fileSHA256 is the hex sha256 and size of a local file.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	hash := sha256.New()
	n, err := io.Copy(hash, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(hash.Sum(nil)), n, nil
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

var _ infra.Shipper = (*Host)(nil)

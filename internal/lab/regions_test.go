package lab

import (
	"net"
	"strings"
	"testing"
	"time"
)

// lab.regions: hosts of different regions reach each other at the
// regions' link rate, hosts of one region at their own link rate; a
// region a host names must be listed.
func TestRegionLinkRate(t *testing.T) {
	d := Definition{
		Regions: []RegionSpec{{Name: "eu", LinkMbitToOthers: 20}, {Name: "us", LinkMbitToOthers: 20}},
		Hosts: []HostSpec{{Name: "a", Type: "small", Region: "eu", NetworkMbit: 200}, {Name: "b", Type: "small", Region: "us", NetworkMbit: 200},
			{Name: "c", Type: "small", Region: "eu", NetworkMbit: 200}},
	}
	hosts, err := d.resolve(DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if hosts[0].Region != "eu" || hosts[0].RegionLinkMbit != 20 || hosts[1].Region != "us" {
		t.Fatalf("resolved %+v", hosts)
	}
	bad := d
	bad.Regions = bad.Regions[:1]
	if _, err := bad.resolve(DefaultCatalog()); err == nil || !strings.Contains(err.Error(), `host b is in region "us", which lab.regions does not list`) {
		t.Fatalf("unlisted region: %v", err)
	}

	l := upLab(t, "t-regions", hosts)
	cross := hostTransfer(t, l, "a", "b", 3*time.Second)
	same := hostTransfer(t, l, "a", "c", 3*time.Second)
	back := hostTransfer(t, l, "b", "a", 3*time.Second)
	t.Logf("eu->us %.1f Mbit/s, us->eu %.1f, eu->eu %.1f (regions capped at 20, hosts' links 200)", cross, back, same)
	if cross < 16 || cross > 22 || back < 16 || back > 22 {
		t.Errorf("between regions: %.1f and %.1f Mbit/s of payload, want 20 Mbit/s -10%%/+10%%", cross, back)
	}
	if same < 60 {
		t.Errorf("within a region: %.1f Mbit/s, want far above the 20 Mbit/s between regions", same)
	}
}

// hostTransfer sends from host from to a listener on host to for d and
// returns the payload rate the receiver saw, in Mbit/s.
func hostTransfer(t *testing.T, l *Lab, from, to string, d time.Duration) float64 {
	t.Helper()
	h, _ := l.Host(to)
	ln, err := l.Listen(to, "tcp", h.Addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		n    int64
		secs float64
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{}
			return
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		var n int64
		var first, last time.Time
		for {
			k, err := c.Read(buf)
			if k > 0 {
				if first.IsZero() {
					first = time.Now()
				}
				n += int64(k)
				last = time.Now()
			}
			if err != nil {
				break
			}
		}
		done <- result{n, last.Sub(first).Seconds()}
	}()
	c, err := l.Dial(from, &net.Dialer{Timeout: 2 * time.Second}, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	stop := time.Now().Add(d)
	for time.Now().Before(stop) {
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	r := <-done
	return float64(r.n) * 8 / r.secs / 1e6
}

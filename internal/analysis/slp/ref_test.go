package slp

import "testing"

func TestParseSeries(t *testing.T) {
	for _, c := range []struct{ ref, host, res, src string }{
		{"db1/volume:data", "db1", "volume:data", ""},
		{"db1/volume:vol-1@cloudwatch", "db1", "volume:vol-1", "cloudwatch"},
		{"db1/cgroup:/headroom-lab/x@sampled", "db1", "cgroup:/headroom-lab/x", "sampled"},
		{"db1/cgroup:/headroom-lab/x/db1@sampled", "db1", "cgroup:/headroom-lab/x/db1", "sampled"},
		{"ip-10-0-0-1/volume:vol-1@cloudwatch", "ip-10-0-0-1", "volume:vol-1", "cloudwatch"},
	} {
		h, r, s, err := ParseSeries(c.ref)
		if err != nil || h != c.host || r != c.res || s != c.src {
			t.Errorf("%s: %q %q %q %v", c.ref, h, r, s, err)
		}
	}
	for _, bad := range []string{"", "db1", "/volume:data", "db1/", "db1/volume:data@", "db1/@iostat", "db1/@x"} {
		if _, _, _, err := ParseSeries(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseSeries(f *testing.F) {
	for _, s := range []string{"db1/volume:data", "db1/disk:xvdf@iostat", "a/b@c@d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		h, r, s, err := ParseSeries(ref)
		if err != nil {
			return
		}
		back := h + "/" + r
		if s != "" {
			back += "@" + s
		}
		if back != ref || h == "" || r == "" {
			t.Errorf("%q read as %q %q %q", ref, h, r, s)
		}
	})
}

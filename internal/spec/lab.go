package spec

import (
	"path/filepath"
	"strings"

	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// lab checks the lab: and events: sections against the instance catalog.
func (c *checker) lab(s *Spec) {
	allCluster := c.clusterEvents(s)
	if s.Lab == nil {
		if len(s.Events) > 0 && !allCluster {
			c.fail("events", "events act on lab hosts, but the spec has no lab: section; add one or remove events (only add_node and remove_node run without a lab)")
		}
		return
	}
	if s.Lab.Name == "" && len(s.Name) > 24 {
		c.fail("lab.name", "the lab is named after the campaign, but %q is longer than 24 characters; set lab.name", s.Name)
		return
	}
	dir := ""
	if c.file != "" {
		dir = filepath.Dir(c.file)
	}
	hosts, cat, err := s.Lab.Resolve(dir)
	if err != nil {
		c.pathError("lab.catalog", err)
		return
	}
	if err := lab.CheckEventsWith(s.Events, hosts, cat, s.Phases.Measure.Duration); err != nil {
		c.pathError("events", err)
	}
	c.managedHost(s, hosts)
}

// managedHost checks that target.managed.host names a host of the lab:
// the run would otherwise stop after the lab came up.
func (c *checker) managedHost(s *Spec, hosts []lab.HostConfig) {
	m := registry.ManagedOf(s.Target.Options)
	if m == nil || m.Host == "" {
		return
	}
	names := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if h.Name == m.Host {
			return
		}
		names = append(names, h.Name)
	}
	c.fail("target.managed.host", "%q names no host of the lab; use one of %s", m.Host, strings.Join(names, ", "))
}

// pathError reports err, whose message starts with the field path
// ("lab.hosts[0].type: ..."), at that field; other messages go to fallback.
func (c *checker) pathError(fallback string, err error) {
	msg := oneLine(err.Error())
	if p, rest, ok := strings.Cut(msg, ": "); ok && (strings.HasPrefix(p, "lab.") || strings.HasPrefix(p, "events")) && !strings.Contains(p, " ") {
		c.fail(p, "%s", rest)
		return
	}
	c.fail(fallback, "%s", msg)
}

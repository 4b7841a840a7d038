package fromspec

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/headroom-dev/headroom/internal/infra/sshinfra"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/spec"
)

// sshProvider resolves the spec's infra: section (provider ssh): paths
// relative to the spec file (~ is the home directory), defaults, and each
// host's price from price_per_hour or its catalog type.
func sshProvider(s *spec.Spec, specDir string) (*sshinfra.Provider, error) {
	in := s.Infra
	path := func(p string) string {
		if p == "" {
			return ""
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				return filepath.Join(home, rest)
			}
		}
		if !filepath.IsAbs(p) {
			return filepath.Join(specDir, p)
		}
		return p
	}
	catFile := path(in.Catalog)
	cat, err := lab.LoadCatalog(catFile)
	if err != nil {
		return nil, err
	}
	me := ""
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	var opt sshinfra.Options
	for _, h := range in.Hosts {
		c := in.Conn(h)
		hc := sshinfra.HostConfig{Name: h.Name, Address: h.Address, Port: c.Port, User: c.User,
			KeyFile: path(c.KeyFile), Agent: c.Agent != nil && *c.Agent, PassphraseEnv: c.PassphraseEnv,
			PassphraseFile: path(c.PassphraseFile), KnownHosts: path(c.KnownHosts),
			InsecureIgnoreHostKey: c.InsecureIgnoreHostKey != nil && *c.InsecureIgnoreHostKey, Type: h.Type, Region: h.Region}
		if hc.User == "" {
			hc.User = me
		}
		if t, ok := cat.Instance(h.Type); ok && h.Type != "" {
			hc.PricePerHour = t.PricePerHour
		}
		if h.PricePerHour != nil {
			hc.PricePerHour = *h.PricePerHour
		}
		opt.Hosts = append(opt.Hosts, hc)
	}
	for _, e := range s.Events {
		if e.Action == lab.ActPartition {
			opt.Partitions = true
		}
	}
	return sshinfra.New(opt), nil
}

// Package fromspec picks the infra provider a spec asks for: the lab of its
// lab: section, or this machine. A new provider (ssh hosts, a cloud) is one
// more case here; the campaign only sees infra.Provider.
package fromspec

import (
	"fmt"
	"path/filepath"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra"
	"github.com/headroom-dev/headroom/internal/infra/local"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Provider returns the provider of s's hosts. Nothing is brought up yet.
func Provider(s *spec.Spec) (infra.Provider, error) {
	specDir := ""
	if s.File != "" {
		specDir = filepath.Dir(s.File)
	}
	if s.Infra != nil {
		p, err := sshProvider(s, specDir)
		if err != nil {
			return nil, fmt.Errorf("infra: %w", err)
		}
		return p, nil
	}
	if s.Lab == nil {
		return local.New(local.Options{}), nil
	}
	p, err := labinfra.FromDefinition(s.Lab, s.Name, specDir)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	return p, nil
}

// Local reports whether p gives only this machine: managed servers then
// run on loopback and name no host.
func Local(p infra.Provider) bool { return p.Name() == local.Name }

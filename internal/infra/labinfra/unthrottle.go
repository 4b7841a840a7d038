package labinfra

import "github.com/headroom-dev/headroom/internal/infra"

// Unthrottle implements infra.Unthrottler: the lab's hosts' volume and CPU
// limits are lifted (lab.Lab.Unthrottle).
func (p *Provider) Unthrottle() error {
	l, err := p.up()
	if err != nil {
		return err
	}
	return l.Unthrottle()
}

// Rethrottle implements infra.Unthrottler: the limits are back as defined
// and the volume governor runs again (lab.Lab.Rethrottle).
func (p *Provider) Rethrottle() error {
	l, err := p.up()
	if err != nil {
		return err
	}
	return l.Rethrottle()
}

var _ infra.Unthrottler = (*Provider)(nil)

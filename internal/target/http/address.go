package httptarget

import "net"

// Address implements target.Addresser: the host:port of base_url, with the
// scheme's port when it names none.
func (t *Target) Address() string {
	port := t.base.Port()
	if port == "" {
		port = "80"
		if t.base.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(t.base.Hostname(), port)
}

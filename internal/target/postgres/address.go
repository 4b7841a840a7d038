package postgres

import (
	"net"
	"strconv"
	"strings"
)

// Address implements target.Addresser: the host:port the server listens
// on (a managed server's, on its host's address), or "" when the target
// connects through a Unix socket directory.
func (t *Target) Address() string {
	if strings.HasPrefix(t.opts.Host, "/") {
		return ""
	}
	return net.JoinHostPort(t.opts.Host, strconv.Itoa(t.opts.Port))
}

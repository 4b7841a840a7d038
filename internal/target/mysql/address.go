package mysql

// Address implements target.Addresser: the host:port the server listens
// on (a managed server's, on its host's address), or "" when the driver
// does not connect over TCP.
func (t *Target) Address() string {
	if t.cfg == nil || t.cfg.Net != "tcp" {
		return ""
	}
	return t.cfg.Addr
}

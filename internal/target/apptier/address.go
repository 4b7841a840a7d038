package apptier

// Address implements target.Addresser: the host:port of the first
// application server, which the load reaches first (on a lab host, the
// host's address).
func (t *Target) Address() string {
	apps := t.serving()
	if len(apps) == 0 {
		return ""
	}
	return apps[0].addr
}

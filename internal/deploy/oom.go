package deploy

import "fmt"

// oomCounter is a host that counts the processes its memory limit killed
// (a lab host: labinfra.Host).
type oomCounter interface {
	OOMKills() (kills, limitMiB int64, ok bool)
}

// oomKills reads the placement host's count; ok is false on this machine
// or where the kernel does not count.
func (i *Instance) oomKills() (kills, limitMiB int64, ok bool) {
	if i.place == nil {
		return 0, 0, false
	}
	c, is := i.place.on.(oomCounter)
	if !is {
		return 0, 0, false
	}
	return c.OOMKills()
}

// oomCause says that the server was killed by its host's memory limit when
// the host's OOM count rose past before; "" when it did not (or cannot be
// told).
func (i *Instance) oomCause(before int64) string {
	after, mib, ok := i.oomKills()
	if !ok || after <= before {
		return ""
	}
	return fmt.Sprintf("the %s server was killed by host %s's memory limit (%d MiB; the kernel killed %d process(es) in the host's cgroup): raise the host's memory_mib (or choose a larger instance type), or lower the server's memory settings",
		i.Kind, i.place.Host, mib, after-before)
}

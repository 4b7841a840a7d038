package cli

import (
	"net"
	"reflect"
)

// oneThreadServer names the target types whose server executes commands
// on one thread (Redis), so that one core is all it can use: widenScheduler
// leaves it that core when it runs on this machine.
var oneThreadServer = map[string]bool{"redis": true}

// serverOnThisMachine says whether a networked target's server runs on
// this machine, from its options: a managed server (started here, or in a
// lab on this machine), or a host or address that is a loopback or one of
// this machine's own addresses. Unknown options say false: a remote server
// is the safe guess, since then the client keeps every core.
func serverOnThisMachine(opts any) bool {
	v := reflect.ValueOf(opts)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return false
	}
	if m := v.FieldByName("Managed"); m.IsValid() && m.Kind() == reflect.Pointer && !m.IsNil() {
		return true
	}
	for _, name := range []string{"Address", "Host"} {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.String || f.String() == "" {
			continue
		}
		host := f.String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		return isThisMachine(host)
	}
	return false
}

// isThisMachine says whether host names this machine.
func isThisMachine(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false // a name other than localhost: not looked up, assumed remote
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

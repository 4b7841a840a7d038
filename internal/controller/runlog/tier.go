package runlog

import "strings"

// InTier says whether a lab host belongs to the tier whose hosts are named
// prefix: the bare prefix, or the prefix followed by a number (app, app1,
// app12), as the controller names the hosts it adds.
func InTier(prefix, host string) bool {
	rest, ok := strings.CutPrefix(host, prefix)
	if !ok || prefix == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

package slp

import (
	"fmt"
	"strings"
)

// ParseSeries reads a reference to the samples of one host's resource,
// HOST/RESOURCE or HOST/RESOURCE@SOURCE (e.g. db1/volume:data@cloudwatch),
// as analysis.esl.pairs and the command line write it. The source is ""
// when the reference names none. A resource may itself hold "/" (a
// cgroup path); the source is what follows the last "@".
func ParseSeries(ref string) (host, resource, source string, err error) {
	host, rest, ok := strings.Cut(ref, "/")
	if !ok || host == "" || rest == "" {
		return "", "", "", fmt.Errorf("%q is not a series; write HOST/RESOURCE or HOST/RESOURCE@SOURCE, e.g. db1/volume:data@cloudwatch", ref)
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest, source = rest[:i], rest[i+1:]
		if rest == "" || source == "" {
			return "", "", "", fmt.Errorf("%q is not a series; write HOST/RESOURCE@SOURCE with both parts, e.g. db1/disk:xvdf@iostat", ref)
		}
	}
	return host, rest, source, nil
}

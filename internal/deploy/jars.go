package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Servers that come as Java archives from Maven Central (Cassandra,
// DynamoDB Local) are fetched once into a cache by scripts/fetch-jars.sh
// (`make deps`), which checks them against the checksums committed in
// deps/jars/NAME/SHA256SUMS. Recipes read them from the same place.

// ErrMissingJars is wrapped by errors about jar sets not in the cache.
var ErrMissingJars = fmt.Errorf("%w: jars not fetched", ErrMissingBinary)

// JarCache is the cache directory: $HEADROOM_JAR_CACHE; for root
// /var/cache/headroom/jars, which the unprivileged user a server runs as
// can read (root's home is closed to it); else ~/.cache/headroom/jars.
func JarCache() string {
	if d := os.Getenv("HEADROOM_JAR_CACHE"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/cache/headroom/jars"
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "/root"
	}
	return filepath.Join(home, ".cache", "headroom", "jars")
}

// JarDir is the directory of one jar set (name is a directory of
// deps/jars), or an error that says how to fetch it.
func JarDir(name string) (string, error) {
	dir := filepath.Join(JarCache(), name)
	jars, _ := filepath.Glob(filepath.Join(dir, "*.jar"))
	if len(jars) == 0 {
		return "", fmt.Errorf("%w: the %s jars are not in %s; run `make deps` (or scripts/fetch-jars.sh %s) to fetch them from Maven Central", ErrMissingJars, name, dir, name)
	}
	return dir, nil
}

// Classpath is every jar of a set, joined for java -cp, in name order so
// that the command line is the same on every start.
func Classpath(name string) (string, error) {
	dir, err := JarDir(name)
	if err != nil {
		return "", err
	}
	jars, err := filepath.Glob(filepath.Join(dir, "*.jar"))
	if err != nil {
		return "", err
	}
	sort.Strings(jars)
	return strings.Join(jars, string(os.PathListSeparator)), nil
}

// Java finds the java launcher (Debian: openjdk-17-jre-headless).
func Java() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		p := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: java (install the Debian package openjdk-17-jre-headless)", ErrMissingBinary)
	}
	return p, nil
}

// Package version holds the tool version, stamped at build time by the
// Makefile (-ldflags "-X .../version.Version=...").
package version

// Version is the tool version; "dev" for builds outside the Makefile.
var Version = "dev"

package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Cassandra node that cannot join logs the exception, then its shutdown:
// the error names the exception, which the last lines alone do not.
func TestLogSaysNamesTheStartupExceptionBeforeTheShutdown(t *testing.T) {
	log := `INFO  [main] 2026-12-01 23:18:30,424 InboundConnectionInitiator.java:164 - Listening on address: (/10.201.0.11:7000)
Exception (java.lang.RuntimeException) encountered during startup: Unable to gossip with any peers
java.lang.RuntimeException: Unable to gossip with any peers
	at org.apache.cassandra.gms.Gossiper.doShadowRound(Gossiper.java:2075)
ERROR [main] 2026-12-01 23:18:39,623 CassandraDaemon.java:887 - Exception encountered during startup
java.lang.RuntimeException: Unable to gossip with any peers
	at org.apache.cassandra.gms.Gossiper.doShadowRound(Gossiper.java:2075)
INFO  [StorageServiceShutdownHook] 2026-12-01 23:18:39,638 MessagingService.java:584 - Waiting for messaging service to quiesce
INFO  [StorageServiceShutdownHook] 2026-12-01 23:18:40,768 HintsService.java:234 - Paused hints dispatch
INFO  [StorageServiceShutdownHook] 2026-12-01 23:18:42,725 StorageService.java:993 - Cassandra shutdown complete
`
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got := logSays(path, 2)
	for _, want := range []string{"its log " + path + " ends with: ", "Cassandra shutdown complete", "the error it logged last: java.lang.RuntimeException: Unable to gossip with any peers"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	// An error among the last lines is not said twice.
	if err := os.WriteFile(path, []byte("starting\n2026-12-01 FATAL:  invalid value for parameter \"shared_buffers\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := logSays(path, 5); strings.Contains(got, "logged last") || !strings.Contains(got, "shared_buffers") {
		t.Errorf("an error in the tail: %q", got)
	}
	if got := failureLine([]byte("all fine\nready\n")); got != "" {
		t.Errorf("a log without an error: %q", got)
	}
}

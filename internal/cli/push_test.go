package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/report/page"
)

// sharedPostgres starts a managed PostgreSQL for the test (internal/deploy)
// and returns the URL of its workload database, with the password in
// PGPASSWORD only, as a user passes it. It skips when PostgreSQL is not
// installed (fails under HEADROOM_REQUIRE_SERVERS=1).
func sharedPostgres(t *testing.T) (url, password string) {
	t.Helper()
	base := t.TempDir()
	for d := base; d != os.TempDir() && d != "/" && d != filepath.Dir(d); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := deploy.Start(context.Background(), deploy.Postgres(), filepath.Join(base, "pg"), deploy.Managed{})
	if inst != nil {
		t.Cleanup(func() { inst.Remove(context.Background()) })
	}
	if errors.Is(err, deploy.ErrMissingBinary) && os.Getenv("HEADROOM_REQUIRE_SERVERS") != "1" {
		t.Skip("PostgreSQL is not installed: ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSWORD", inst.Password)
	return "postgres://" + inst.User + "@" + inst.Addr() + "/" + inst.Database + "?sslmode=disable", inst.Password
}

var campaignID = regexp.MustCompile(`\(([0-9a-f]{16})\)`)

// A short real campaign pushed into a real PostgreSQL reports from its URL
// as from its file: the same terminal summary and report.json, apart from
// the paths. Pushing again writes nothing; the password is refused in the
// URL and appears in no output.
func TestPushAndReportFromPostgres(t *testing.T) {
	url, password := sharedPostgres(t)
	out, errOut, code := headroom(t, "run", "-q", "--no-report", "-o", t.TempDir(), "testdata/sqlite-inserts.yaml")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	m := resultsDB.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no results path in output:\n%s", out)
	}
	dir := filepath.Dir(m[1])
	var said strings.Builder // everything headroom printed, checked for the password at the end

	pushed, errOut, code := headroom(t, "push", dir, url)
	said.WriteString(pushed + errOut)
	if code != 0 || !strings.Contains(pushed, "pushed campaign inserttest") {
		t.Fatalf("push: exit %d\n%s\n%s", code, pushed, errOut)
	}
	id := campaignID.FindStringSubmatch(pushed)
	if id == nil {
		t.Fatalf("push names no campaign ID:\n%s", pushed)
	}
	again, errOut, code := headroom(t, "push", dir, url)
	said.WriteString(again + errOut)
	if code != 0 || !strings.Contains(again, "is already in") || !strings.Contains(again, "nothing written") {
		t.Fatalf("second push: exit %d\n%s\n%s", code, again, errOut)
	}

	fromFile, errOut, code := headroom(t, "report", dir)
	if code != 0 {
		t.Fatalf("report from the file: exit %d\n%s", code, errOut)
	}
	outDir := t.TempDir()
	fromURL, errOut, code := headroom(t, "report", "--out", outDir, url+"&campaign="+id[1])
	said.WriteString(fromURL + errOut)
	if code != 0 || !strings.Contains(errOut, "read from the shared results database: campaign inserttest ("+id[1]+")") {
		t.Fatalf("report from the URL: exit %d\n%s\n%s", code, fromURL, errOut)
	}
	if a, b := strings.ReplaceAll(fromFile, dir, "DIR"), strings.ReplaceAll(fromURL, outDir, "DIR"); a != b {
		t.Errorf("the summaries differ:\nfrom the file:\n%s\nfrom the URL:\n%s", a, b)
	}
	jsonFile, err := os.ReadFile(filepath.Join(dir, page.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	jsonURL, err := os.ReadFile(filepath.Join(outDir, page.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(jsonFile) < 1000 || string(jsonFile) != string(jsonURL) {
		t.Errorf("report.json differs (%d bytes from the file, %d from the URL)", len(jsonFile), len(jsonURL))
	}

	// The one campaign is found without ?campaign=, and plan reads the URL too.
	planOut, errOut, code := headroom(t, "plan", url)
	said.WriteString(planOut + errOut)
	if code != 0 && !strings.Contains(errOut, "inserttest") {
		t.Errorf("plan from the URL: exit %d\n%s\n%s", code, planOut, errOut)
	}

	// A password in the URL is refused, without echoing it.
	withPw := strings.Replace(url, "@", ":"+password+"@", 1)
	for _, cmd := range [][]string{{"push", dir, withPw}, {"report", withPw}} {
		o, e, code := headroom(t, cmd...)
		if code == 0 || !strings.Contains(e, "holds a password") || strings.Contains(o+e, password) {
			t.Errorf("%s with a password in the URL: exit %d\n%s\n%s", cmd[0], code, o, e)
		}
	}
	if strings.Contains(said.String(), password) {
		t.Errorf("the password appears in headroom's output")
	}
	for _, f := range []string{filepath.Join(outDir, page.JSONFile), filepath.Join(outDir, page.HTMLFile)} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), password) {
			t.Errorf("the password appears in %s", f)
		}
	}
}

package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// A store pushed and copied back out is the same store, table by table
// (rows, their order, every value and its type; the indexes); pushing it
// again writes nothing; pushing it after the campaign grew replaces only
// the tables that changed; an older copy is refused.
func TestPushIsIdempotentAndCopiesBackExactly(t *testing.T) {
	url := freshDB(t)
	ctx := context.Background()
	path := copyStore(t, "lab.db")
	db := connect(t, url)

	first, err := db.Push(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !first.New || first.Unchanged != 0 || len(first.Copied) == 0 || first.Name != "v1-lab" {
		t.Fatalf("first push: %+v", first)
	}
	back := filepath.Join(t.TempDir(), "copy.db")
	c, err := db.Choose(ctx, "")
	if err != nil || c.ID != first.ID {
		t.Fatalf("choose: %+v, %v", c, err)
	}
	if err := db.Materialize(ctx, c, back); err != nil {
		t.Fatal(err)
	}
	if want, got := tableSums(t, path), tableSums(t, back); !reflect.DeepEqual(want, got) {
		t.Fatalf("the copy differs:\nstore %v\ncopy  %v", want, got)
	}
	// The copy reads as the store does.
	orig, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	cp, err := results.Open(back)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if !reflect.DeepEqual(orig.Runs(), cp.Runs()) || !reflect.DeepEqual(orig.HostNames(), cp.HostNames()) || len(orig.Runs()) == 0 {
		t.Fatalf("runs or hosts differ: %d vs %d runs", len(orig.Runs()), len(cp.Runs()))
	}

	// Again: nothing is written.
	before := map[string]string{}
	for _, tb := range []string{"run", "interval", "sample", "event", "_campaigns"} {
		before[tb] = versionsOf(t, url, tb, first.ID)
	}
	again, err := db.Push(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if again.New || len(again.Copied) != 0 || again.Unchanged != first.Unchanged+len(first.Copied) {
		t.Fatalf("second push: %+v", again)
	}
	for tb, v := range before {
		if got := versionsOf(t, url, tb, first.ID); got != v {
			t.Errorf("the second push rewrote table %s", tb)
		}
	}

	// The campaign grows (as a resumed one does): a new run with an event.
	older := filepath.Join(t.TempDir(), "older.db")
	copyFile(t, path, older)
	execLite(t, path,
		`INSERT INTO run (seq, slot, treatment, model, level_index, level, repetition, start_ns, status, message)
			SELECT seq, slot, treatment, model, level_index, level, repetition + 10, start_ns + 1, 'running', '' FROM run ORDER BY id DESC LIMIT 1`,
		`INSERT INTO event (run_id, time_ns, kind, detail) SELECT max(id), 1, 'phase', 'measure' FROM run`)
	grown, err := db.Push(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(grown.Copied); !reflect.DeepEqual(got, []string{"run", "event"}) {
		t.Fatalf("the push of the grown store copied %v; want run and event only", got)
	}
	for _, tb := range []string{"interval", "sample"} {
		if got := versionsOf(t, url, tb, first.ID); got != before[tb] {
			t.Errorf("the push of the grown store rewrote unchanged table %s", tb)
		}
	}
	back2 := filepath.Join(t.TempDir(), "copy2.db")
	if err := db.Materialize(ctx, c, back2); err != nil {
		t.Fatal(err)
	}
	if want, got := tableSums(t, path), tableSums(t, back2); !reflect.DeepEqual(want, got) {
		t.Fatalf("the copy of the grown store differs")
	}

	// The copy from before the new run would lose it: refused.
	_, err = db.Push(ctx, older)
	if err == nil || !strings.Contains(err.Error(), "older copy of campaign "+first.ID) {
		t.Fatalf("pushing an older copy: %v", err)
	}
}

// Campaigns are chosen by ID, ID prefix or name; an ambiguous or unknown
// choice lists them.
func TestChooseCampaign(t *testing.T) {
	url := freshDB(t)
	ctx := context.Background()
	db := connect(t, url)
	if _, err := db.Choose(ctx, ""); err == nil || !strings.Contains(err.Error(), "holds no campaigns yet") {
		t.Fatalf("empty database: %v", err)
	}
	a, err := db.Push(ctx, copyStore(t, "treatments.db"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Push(ctx, copyStore(t, "closed.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Choose(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "holds several campaigns") || !strings.Contains(err.Error(), a.ID) || !strings.Contains(err.Error(), b.ID) {
		t.Fatalf("two campaigns, no choice: %v", err)
	}
	for _, choice := range []string{a.ID, a.ID[:6], a.Name} {
		if c, err := db.Choose(ctx, choice); err != nil || c.ID != a.ID {
			t.Errorf("choose %q: %+v, %v", choice, c, err)
		}
	}
	if _, err := db.Choose(ctx, "nosuch"); err == nil || !strings.Contains(err.Error(), `no campaign "nosuch"`) || !strings.Contains(err.Error(), b.Name) {
		t.Errorf("unknown campaign: %v", err)
	}
	// Fetch takes the choice from the URL.
	p := filepath.Join(t.TempDir(), "results.db")
	c, err := Fetch(ctx, url+"&campaign="+b.ID[:8], Options{}, p)
	if err != nil || c.ID != b.ID {
		t.Fatalf("fetch: %+v, %v", c, err)
	}
	if !reflect.DeepEqual(tableSums(t, p), tableSums(t, copyStore(t, "closed.db"))) {
		t.Fatal("the fetched copy differs from the store")
	}
}

// The password comes from the environment or a file, never from the URL;
// it is in no error and in nothing pushed.
func TestPasswordStaysOut(t *testing.T) {
	url := freshDB(t)
	ctx := context.Background()
	pw := os.Getenv("PGPASSWORD")
	withPw := strings.Replace(url, "@", ":"+pw+"@", 1)
	_, err := Connect(ctx, withPw, Options{})
	if err == nil || !strings.Contains(err.Error(), "holds a password") || strings.Contains(err.Error(), pw) {
		t.Fatalf("URL with a password: %v", err)
	}
	if _, err := Connect(ctx, url+"&password="+pw, Options{}); err == nil || strings.Contains(err.Error(), pw) {
		t.Fatalf("URL with a password parameter: %v", err)
	}

	// A wrong password from the environment: refused, and not echoed.
	t.Setenv("PGPASSWORD", "wrong-"+pw)
	_, err = Connect(ctx, url, Options{})
	if err == nil || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "cannot connect to the results database") {
		t.Fatalf("wrong password: %v", err)
	}
	// The right one from a file.
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Connect(ctx, url, Options{PasswordFile: file})
	if err != nil {
		t.Fatalf("password file: %v", err)
	}
	defer db.Close()
	if _, err := db.Push(ctx, copyStore(t, "closed.db")); err != nil {
		t.Fatal(err)
	}
	var hits int
	if err := db.conn.QueryRow(ctx, `SELECT count(*) FROM (
		SELECT t::text AS s FROM headroom._campaigns t UNION ALL SELECT t::text FROM headroom._tables t
		UNION ALL SELECT t::text FROM headroom.campaign t UNION ALL SELECT t::text FROM headroom.event t) x
		WHERE position($1 in s) > 0`, pw).Scan(&hits); err != nil || hits != 0 {
		t.Fatalf("the password is in %d pushed rows (%v)", hits, err)
	}
	if _, err := Connect(ctx, url, Options{PasswordFile: filepath.Join(t.TempDir(), "none")}); err == nil || !strings.Contains(err.Error(), "cannot read the password file") {
		t.Fatalf("missing password file: %v", err)
	}
}

// A file that is not a results store is refused in the store's words.
func TestPushRefusesOtherFiles(t *testing.T) {
	url := freshDB(t)
	db := connect(t, url)
	p := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(p, []byte("hello"), 0o644)
	if _, err := db.Push(context.Background(), p); err == nil || !strings.Contains(err.Error(), "not a Headroom results database") {
		t.Fatalf("push of a text file: %v", err)
	}
}

func versionsOf(t *testing.T, url, table, id string) string {
	t.Helper()
	if table == "_campaigns" {
		db := connect(t, url)
		var v string
		if err := db.conn.QueryRow(context.Background(), `SELECT xmin::text || pushed_at::text FROM headroom._campaigns WHERE campaign_id = $1`, id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	return rowVersions(t, url, table, id)
}

func names(cs []TableCopy) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A finished run already pushed is history: a copy whose run was edited
// is refused with the run and the difference, and the shared copy stays
// as it was; the unedited copy is still already pushed.
func TestPushNeverRewritesAFinishedRun(t *testing.T) {
	url := freshDB(t)
	ctx := context.Background()
	path := copyStore(t, "lab.db")
	db := connect(t, url)
	first, err := db.Push(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	before := versionsOf(t, url, "run", first.ID)
	edited := filepath.Join(t.TempDir(), "results.db")
	copyFile(t, path, edited)
	execLite(t, edited, `UPDATE run SET completed = completed + 30 WHERE id = (SELECT min(id) FROM run WHERE status = 'completed')`)
	var id, completed int64
	var level float64
	lite, err := openSQLite(path, "ro")
	if err != nil {
		t.Fatal(err)
	}
	err = lite.QueryRow(`SELECT id, level, completed FROM run WHERE status = 'completed' ORDER BY id LIMIT 1`).Scan(&id, &level, &completed)
	lite.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Push(ctx, edited)
	want := fmt.Sprintf("run %d (level %s) of %s differs from the shared copy in %s: completed %s here vs %s there; push refuses to rewrite a finished run",
		id, shownValue(level), edited, db.Where(), shownValue(completed+30), shownValue(completed))
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("pushing an edited finished run: %v\nwant %q...", err, want)
	}
	t.Log(err)
	if versionsOf(t, url, "run", first.ID) != before {
		t.Error("the refused push rewrote the shared runs")
	}
	again, err := db.Push(ctx, path)
	if err != nil || len(again.Copied) != 0 {
		t.Fatalf("pushing the unedited copy again: %+v, %v; want nothing written", again, err)
	}
}

// A damaged store is not pushed: the team would read its numbers.
func TestPushRefusesDamagedStore(t *testing.T) {
	url := freshDB(t)
	db := connect(t, url)
	path := copyStore(t, "closed.db")
	execLite(t, path, `UPDATE run SET throughput = 9e999 WHERE id = (SELECT min(id) FROM run WHERE status = 'completed')`)
	var d *store.Damaged
	if _, err := db.Push(context.Background(), path); !errors.As(err, &d) || !strings.Contains(err.Error(), "throughput +Inf") {
		t.Fatalf("pushing a store with an infinite throughput: %v; want it refused as damaged", err)
	}
}

// A finished run's rows are history too (issue 36): a copy in which one of
// its intervals was edited, or a sample of it removed, is refused with the
// run and the table, and the shared copy stays as it was; rows added to a
// finished run (monitoring data imported into it afterwards) are pushed,
// and from then on they are history as well.
func TestPushNeverRewritesAFinishedRunsRows(t *testing.T) {
	url := freshDB(t)
	ctx := context.Background()
	path := copyStore(t, "lab.db")
	db := connect(t, url)
	first, err := db.Push(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	intervals := versionsOf(t, url, "interval", first.ID)
	for _, c := range []struct{ name, edit, want string }{
		{"an interval edited", `UPDATE interval SET count = count + 1 WHERE rowid = (SELECT max(rowid) FROM interval WHERE run_id = 1)`,
			"its 5 rows in interval are not those pushed (5 here)"},
		{"a sample removed", `DELETE FROM sample WHERE rowid = (SELECT min(rowid) FROM sample WHERE run_id = 1)`,
			"its 275 rows in sample are not those pushed (274 here)"},
		{"an event's detail changed", `UPDATE event SET detail = detail || ' ' WHERE run_id = 1`,
			"rows in event are not those pushed"},
	} {
		edited := filepath.Join(t.TempDir(), "results.db")
		copyFile(t, path, edited)
		execLite(t, edited, c.edit)
		_, err := db.Push(ctx, edited)
		want := fmt.Sprintf("run 1 of %s differs from the shared copy in %s: ", edited, db.Where())
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "push refuses to rewrite a finished run") {
			t.Errorf("%s: %v\nwant %q...%q", c.name, err, want, c.want)
		}
	}
	if versionsOf(t, url, "interval", first.ID) != intervals {
		t.Error("a refused push rewrote the shared intervals")
	}

	// Rows added to the finished run: pushed.
	execLite(t, path, `INSERT INTO sample SELECT * FROM sample WHERE rowid = (SELECT max(rowid) FROM sample WHERE run_id = 1)`)
	added, err := db.Push(ctx, path)
	if err != nil || len(added.Copied) != 1 || added.Copied[0].Name != "sample" || added.Copied[0].Rows != 276 {
		t.Fatalf("pushing a sample added to a finished run: %+v, %v; want the sample table copied with 276 rows", added, err)
	}
	if again, err := db.Push(ctx, path); err != nil || len(again.Copied) != 0 {
		t.Fatalf("pushing the same copy again: %+v, %v; want nothing written", again, err)
	}
	execLite(t, path, `UPDATE sample SET value = value + 1 WHERE rowid = (SELECT max(rowid) FROM sample WHERE run_id = 1)`)
	if _, err := db.Push(ctx, path); err == nil || !strings.Contains(err.Error(), "its 276 rows in sample are not those pushed") {
		t.Errorf("editing the added sample after it was pushed: %v", err)
	}
}

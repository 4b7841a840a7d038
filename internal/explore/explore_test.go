package explore

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
	"github.com/headroom-dev/headroom/internal/explore/exploretest"
)

func openGrid(t *testing.T) (*Explorer, string) {
	t.Helper()
	path := exploretest.Write(t, filepath.Join(t.TempDir(), "grid-campaign"))
	e, err := Open([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, path
}

func query(t *testing.T, e *Explorer, q string) View {
	t.Helper()
	vs, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Query(ParseRequest(vs, e.analysis.Objective))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	return v
}

// planOf maps each plan row's level to its configuration.
func planOf(v View) map[float64]string {
	out := map[float64]string{}
	for _, c := range v.Plan {
		out[c.Best.Level] = c.Best.Treatment
	}
	return out
}

// The plan table is the designed best configuration at each load, with
// every parameter free and with one fixed; the plot has the series and
// points the query asks for.
func TestQueryPlotsAndPlansTheDesignedBest(t *testing.T) {
	e, _ := openGrid(t)
	if e.analysis.Objective != wildcard.ProfitPerHour {
		t.Fatalf("objective %s, want profit", e.analysis.Objective)
	}
	v := query(t, e, "")
	if len(v.Series) != 1 || len(v.Series[0].Points) != len(exploretest.Levels) {
		t.Fatalf("default view: %d series, want 1 with %d points", len(v.Series), len(exploretest.Levels))
	}
	if v.X.Label != "load (req/s)" || v.Y.Label != "throughput (req/s)" || !v.X.Numeric {
		t.Errorf("axes %+v %+v", v.X, v.Y)
	}
	want := exploretest.Best(0)
	if got := planOf(v); len(got) != 3 || got[100] != want[100] || got[200] != want[200] || got[400] != want[400] {
		t.Errorf("plan %v, want %v", got, want)
	}
	// At 200 req/s app1-db2 and app2-db1 earn the same for the same cost.
	if !v.Plan[1].Tie || v.Plan[0].Tie || v.Plan[1].Candidates != 6 {
		t.Errorf("ties in the plan: %+v", v.Plan)
	}
	p := v.Plan[2].Best.Metric(wildcard.ProfitPerHour)
	if math.Abs(p.Mean-exploretest.Profit(2, 2, 400)) > 0.01 {
		t.Errorf("profit at 400 req/s %v, designed %v", p.Mean, exploretest.Profit(2, 2, 400))
	}
	// The plotted point is the best of the free wildcards too: with y =
	// throughput and objective profit, 400 req/s shows app2-db2's 400.
	if y := v.Series[0].Points[2].Y.Mean; y != 400 {
		t.Errorf("throughput plotted at 400 req/s: %v", y)
	}

	v = query(t, e, "fix."+exploretest.AppParam+"=2")
	want = exploretest.Best(2)
	if got := planOf(v); got[100] != want[100] || got[200] != want[200] || got[400] != want[400] {
		t.Errorf("plan with app=2: %v, want %v", got, want)
	}
	if strings.Join(v.Free, ",") != exploretest.DBParam || strings.Join(v.PlanFree, ",") != exploretest.DBParam {
		t.Errorf("free %v, plan free %v", v.Free, v.PlanFree)
	}

	v = query(t, e, "series="+exploretest.DBParam+"&fix."+exploretest.AppParam+"=1&y=p99_ms")
	if len(v.Series) != 3 {
		t.Fatalf("%d series, want one per db value", len(v.Series))
	}
	for i, s := range v.Series {
		db := exploretest.DBs[i]
		if s.Name != exploretest.DBParam+"="+s.Value || len(s.Points) != 3 {
			t.Errorf("series %d: %s with %d points", i, s.Name, len(s.Points))
		}
		// p99 = 2 ms × level / capacity, to the histogram's precision.
		for j, pt := range s.Points {
			l := exploretest.Levels[j]
			if want := 2 * l / exploretest.Capacity(1, db); math.Abs(pt.Y.Mean-want) > want*0.01 {
				t.Errorf("p99 of app1-db%d at %v: %v, want %v", db, l, pt.Y.Mean, want)
			}
		}
	}

	// A metric on the x axis: cost against throughput, one point per level.
	v = query(t, e, "x=cost_per_hour&y=throughput&fix.level=400&series="+exploretest.DBParam)
	if !v.X.Metric || v.X.Label != "cost ($/h)" || len(v.Series) != 3 || len(v.Plan) != 1 || v.Plan[0].Best.Treatment != "app2-db2" {
		t.Errorf("cost on x: %+v, %d series, plan %+v", v.X, len(v.Series), v.Plan)
	}
	for _, s := range v.Series {
		if len(s.Points) != 1 {
			t.Errorf("series %s has %d points, want 1 (level fixed)", s.Name, len(s.Points))
		}
	}
	// The categorical case: app on the x axis as numbers.
	v = query(t, e, "x="+exploretest.AppParam)
	if v.X.Label != exploretest.AppParam || len(v.Series[0].Points) != 2 || v.Series[0].Points[1].XText != "2" {
		t.Errorf("app on x: %+v %+v", v.X, v.Series)
	}
}

func TestQueryErrorsSayWhatIsWrong(t *testing.T) {
	e, _ := openGrid(t)
	for q, want := range map[string]string{
		"y=speed":                            `y "speed" is not a metric`,
		"x=colour":                           `x "colour" is neither a metric`,
		"series=colour":                      `series "colour" is not a dimension`,
		"series=level":                       `"level" is already on the x axis`,
		"fix.level=100":                      `"level" is both fixed and in group_by`,
		"fix." + exploretest.AppParam + "=3": "apptier.servers=3 was not measured; measured values: 1, 2",
		"objective=colour":                   `objective "colour" is not a metric`,
	} {
		vs, _ := url.ParseQuery(q)
		_, err := e.Query(ParseRequest(vs, e.analysis.Objective))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
}

// A session of requests over every route leaves the store's file byte for
// byte as it was: the explorer opens stores read-only.
func TestSessionLeavesTheStoreUnchanged(t *testing.T) {
	path := exploretest.Write(t, "")
	before := checksums(t, filepath.Dir(path))
	e, err := Open([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	defer srv.Close()
	get := func(route string, status int) []byte {
		t.Helper()
		res, err := http.Get(srv.URL + route)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != status {
			t.Errorf("GET %s: %d %s, want %d", route, res.StatusCode, b, status)
		}
		if strings.HasPrefix(route, "/api/") && !json.Valid(b) {
			t.Errorf("GET %s: not JSON: %s", route, b)
		}
		return b
	}
	if page := get("/", 200); !strings.Contains(string(page), `<script src="app.js">`) {
		t.Errorf("the page: %.200s", page)
	}
	get("/app.js", 200)
	get("/app.css", 200)
	var m Meta
	if err := json.Unmarshal(get("/api/meta", 200), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Stores) != 1 || m.Stores[0].Name != filepath.Base(filepath.Dir(path)) || m.Stores[0].Runs != 37 || m.Stores[0].Completed != 36 {
		t.Errorf("stores %+v", m.Stores)
	}
	if len(m.Points) != 18 || len(m.Dimensions) != 3 || m.Dimensions[0].Name != wildcard.Level {
		t.Errorf("%d points, dimensions %+v", len(m.Points), m.Dimensions)
	}
	get("/api/query?x=level&y=profit_per_hour&series="+exploretest.DBParam, 200)
	get("/api/query?y=speed", 400)
	var v View
	if err := json.Unmarshal(get("/api/query?x=cost_per_hour&fix.level=100", 200), &v); err == nil && len(v.Plan) == 1 {
		// The point app1-db1 at 100 req/s: its two counted runs and the
		// interrupted attempt.
		best := v.Plan[0]
		var runs []RunView
		var idList []string
		for _, id := range best.Best.Runs {
			idList = append(idList, strconv.FormatInt(id, 10))
		}
		ids := strings.Join(idList, ",")
		if err := json.Unmarshal(get("/api/runs?store=0&runs="+ids, 200), &runs); err != nil {
			t.Fatal(err)
		}
		counted := 0
		for _, r := range runs {
			if r.Counted {
				counted++
			}
		}
		if best.Best.Treatment != "app1-db1" || len(runs) != 3 || counted != 2 {
			t.Errorf("runs of %s at 100: %+v", best.Best.Treatment, runs)
		}
		var d RunDetail
		if err := json.Unmarshal(get("/api/run?store=0&id="+idList[0], 200), &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Timeline) != exploretest.Measure+1 || d.Timeline[0].Phase != "warmup" || d.Timeline[1].Phase != "measure" ||
			d.Timeline[1].Throughput != 100 || d.Timeline[1].P99MS == nil || math.Abs(*d.Timeline[1].P99MS-2) > 0.02 || d.Report != "/report/0" || !d.Run.Counted {
			t.Errorf("timeline %+v", d)
		}
	} else {
		t.Errorf("plan at 100 req/s: %+v, %v", v.Plan, err)
	}
	get("/api/runs?store=0&runs=x", 400)
	get("/api/runs?store=7&runs=1", 404)
	get("/api/run?store=0&id=99999", 404)
	var home Home
	if err := json.Unmarshal(get("/api/answer", 200), &home); err != nil || len(home.Cards) != 1 || home.Cards[0].Error != "" || len(home.Cards[0].Card.Answers) == 0 {
		t.Errorf("answer cards %+v, %v", home.Cards, err)
	}
	// The home's plan is the planner's (plan.Make), the designed one.
	if home.Plan == nil || len(home.Plan.Choices) != 3 || home.PlanSummary == "" {
		t.Fatalf("home plan %+v (%s)", home.Plan, home.PlanError)
	}
	for _, c := range home.Plan.Choices {
		if want := exploretest.Best(0)[c.Level]; c.Config != want {
			t.Errorf("plan at %v: %s, designed %s", c.Level, c.Config, want)
		}
	}
	var secs []SectionLink
	if err := json.Unmarshal(get("/api/sections?store=0", 200), &secs); err != nil || len(secs) < 3 || secs[0].ID == "" {
		t.Errorf("sections %+v, %v", secs, err)
	}
	if rep := get("/report/0", 200); !strings.Contains(string(rep), `id="`+secs[0].ID+`"`) {
		t.Errorf("the report lacks section %s", secs[0].ID)
	}
	get("/report/3", 404)
	get("/nothing", 404)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	after := checksums(t, filepath.Dir(path))
	if before["results.db"] == "" || after["results.db"] != before["results.db"] {
		t.Errorf("results.db changed: %s -> %s", before["results.db"], after["results.db"])
	}
	for name, sum := range after {
		// A read-only SQLite reader may leave the WAL index files behind; the
		// log itself must hold nothing.
		if _, ok := before[name]; !ok && name != "results.db-shm" && !(name == "results.db-wal" && sum == emptySum) {
			t.Errorf("the session left %s (%s)", name, sum)
		}
	}
}

var emptySum = func() string { s := sha256.Sum256(nil); return string(s[:]) }()

// checksums is every file in dir by name.
func checksums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		out[e.Name()] = string(s[:])
	}
	return out
}

func TestOpenRefusesWhatIsNotAStore(t *testing.T) {
	dir := t.TempDir()
	notStore := filepath.Join(dir, "notes.txt")
	os.WriteFile(notStore, []byte("hello"), 0o644)
	for path, want := range map[string]string{
		filepath.Join(dir, "none.db"): "does not exist",
		notStore:                      "is not a Headroom results database",
	} {
		if _, err := Open([]string{path}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if _, err := Open(nil); err == nil {
		t.Error("no stores opened without an error")
	}
}

// Two stores of the same workload are explored together; a store
// pseudo-parameter tells their points apart.
func TestTwoStores(t *testing.T) {
	a, b := exploretest.Write(t, filepath.Join(t.TempDir())), exploretest.Write(t, filepath.Join(t.TempDir()))
	e, err := Open([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if len(e.points) != 36 {
		t.Fatalf("%d points, want 36", len(e.points))
	}
	v := query(t, e, "series="+StoreParam)
	if len(v.Series) != 2 || v.Series[0].Points[0].Cell.Store == v.Series[1].Points[0].Cell.Store {
		t.Errorf("series by store: %+v", v.Series)
	}
}

// The page fetches nothing from elsewhere: no URL in the assets but the
// SVG namespace, and no inline script (the policy forbids it).
func TestAssetsAreSelfContained(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := assets.ReadFile(p)
		for _, u := range external.FindAllString(string(b), -1) {
			if u != "http://www.w3.org" {
				t.Errorf("%s refers to %s", p, u)
			}
		}
		if strings.HasSuffix(p, ".html") && regexp.MustCompile(`<script>|<script [^s]|@import|<link[^>]+href="http`).Match(b) {
			t.Errorf("%s has an inline script or outside resource", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

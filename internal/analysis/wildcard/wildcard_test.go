package wildcard

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// grid builds points over app ∈ {1,2}, db ∈ {1,2,4} and levels 100, 200
// whose profit is designed: at level 100 the cheapest configuration
// (app=1, db=1) earns most; at level 200 app=2, db=2 does. Cost per hour
// is app+db dollars; throughput is the level capped at 60·app·db.
func grid() []Point {
	var pts []Point
	for _, app := range []string{"1", "2"} {
		for _, db := range []string{"1", "2", "4"} {
			for _, lvl := range []float64{100, 200} {
				a, d := float64(app[0]-'0'), float64(db[0]-'0')
				tp := math.Min(lvl, 60*a*d)
				profit := tp - 10*(a+d)
				pts = append(pts, Point{Treatment: "app" + app + "-db" + db, Params: map[string]string{"app": app, "db": db}, Level: lvl,
					Metrics: map[Metric]Value{Throughput: {Mean: tp, N: 1, Half: math.NaN()}, CostPerHour: {Mean: a + d, N: 1},
						ProfitPerHour: {Mean: profit, N: 1}, P99: {Mean: 1000 / tp, N: 1}}})
			}
		}
	}
	return pts
}

func TestEvaluateReducesFreeParametersByObjective(t *testing.T) {
	res, err := Evaluate(grid(), Query{GroupBy: []string{Level}, Objective: ProfitPerHour})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 2 || strings.Join(res.Free, ",") != "app,db" {
		t.Fatalf("cells %d free %v", len(res.Cells), res.Free)
	}
	// level 100: app1-db2 gives tp 100 at cost 3 -> 70; app1-db1: 60-20 = 40; app2-db1: 100-30 = 70 (tie, cost 3 each)
	// both cost 3: the text order decides, app=1 before app=2.
	c := res.Cells[0]
	if c.Key[0] != "100" || c.Best.Treatment != "app1-db2" || !c.Tie || c.Candidates != 6 {
		t.Errorf("level 100: %+v", c)
	}
	// level 200: app2-db2 tp 200 cost 4 -> 160; app1-db4 tp 200 cost 5 -> 150; app2-db4 cost 6 -> 140.
	c = res.Cells[1]
	if c.Key[0] != "200" || c.Best.Treatment != "app2-db2" || c.Tie {
		t.Errorf("level 200: %+v", c)
	}
}

func TestEvaluateFixedAndGroupedParameter(t *testing.T) {
	res, err := Evaluate(grid(), Query{Fixed: map[string]string{"app": "1"}, GroupBy: []string{Level, "db"}, Objective: P99})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 6 || len(res.Free) != 0 {
		t.Fatalf("want 6 cells and nothing free, got %d %v", len(res.Cells), res.Free)
	}
	var keys []string
	for _, c := range res.Cells {
		keys = append(keys, strings.Join(c.Key, "/"))
		if c.Best.Params["app"] != "1" || c.Candidates != 1 {
			t.Errorf("cell %v chose %v among %d", c.Key, c.Best.Params, c.Candidates)
		}
	}
	if strings.Join(keys, " ") != "100/1 100/2 100/4 200/1 200/2 200/4" {
		t.Errorf("cell order %v", keys)
	}
	// Lower p99 wins when app is free: at level 200, db=4 with app=2 has
	// throughput 200 (p99 5) like app=1 (also 200): a tie on the objective,
	// decided by cost (app=1 is cheaper).
	res, err = Evaluate(grid(), Query{Fixed: map[string]string{"db": "4"}, GroupBy: []string{Level}, Objective: P99})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Cells[1].Best; b.Params["app"] != "1" || !res.Cells[1].Tie {
		t.Errorf("p99 tie at level 200 went to %v", b.Params)
	}
}

func TestEvaluateErrors(t *testing.T) {
	for _, q := range []Query{
		{GroupBy: []string{"cache"}},
		{Fixed: map[string]string{"db": "3"}},
		{Fixed: map[string]string{"db": "1"}, GroupBy: []string{"db"}},
		{Objective: "speed"},
	} {
		if _, err := Evaluate(grid(), q); err == nil {
			t.Errorf("query %+v: no error", q)
		}
	}
}

func TestResultEncodesNaNAsNull(t *testing.T) {
	res, err := Evaluate(grid(), Query{GroupBy: []string{Level}, Objective: Throughput})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"half":null`) {
		t.Errorf("NaN half-width not written as null: %s", b)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != 2 || !math.IsNaN(back.Cells[0].Best.Metric(Throughput).Half) {
		t.Errorf("round trip lost NaN: %+v", back.Cells)
	}
}

func TestDimensionsSortNumerically(t *testing.T) {
	pts := []Point{{Params: map[string]string{"n": "10"}, Level: 5}, {Params: map[string]string{"n": "9"}, Level: 50}, {Params: map[string]string{"n": "x"}, Level: 5}}
	d := Dimensions(pts)
	if len(d) != 2 || d[0].Name != Level || strings.Join(d[0].Values, ",") != "5,50" || strings.Join(d[1].Values, ",") != "9,10,x" {
		t.Errorf("dimensions %+v", d)
	}
}

// A tie on the objective and on cost goes to the configuration with fewer
// nodes, as the plan breaks it, even when the parameters' text order
// would pick the other; without node counts the text order decides.
func TestTieGoesToFewerNodesThenText(t *testing.T) {
	pt := func(name string, nodes int) Point {
		return Point{Treatment: name, Params: map[string]string{"shape": name}, Level: 100, Nodes: nodes,
			Metrics: map[Metric]Value{ProfitPerHour: {Mean: 50, N: 1}, CostPerHour: {Mean: 4, N: 1}}}
	}
	for _, c := range []struct {
		pts  []Point
		want string
	}{
		{[]Point{pt("a-three-small", 3), pt("b-two-large", 2)}, "b-two-large"},
		{[]Point{pt("b-two-large", 2), pt("a-three-small", 3)}, "b-two-large"},
		{[]Point{pt("a-three-small", 0), pt("b-two-large", 2)}, "a-three-small"},
	} {
		res, err := Evaluate(c.pts, Query{GroupBy: []string{Level}, Objective: ProfitPerHour})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Cells[0]; got.Best.Treatment != c.want || !got.Tie {
			t.Errorf("%s (%d nodes) vs %s (%d nodes): chose %s (tie %v), want %s", c.pts[0].Treatment, c.pts[0].Nodes, c.pts[1].Treatment, c.pts[1].Nodes, got.Best.Treatment, got.Tie, c.want)
		}
	}
	if !strings.Contains(TieBreak, "fewer nodes") {
		t.Errorf("the tie-break text does not name the nodes rule: %s", TieBreak)
	}
}

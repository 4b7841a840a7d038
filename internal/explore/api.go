package explore

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/plan"
	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
	"github.com/headroom-dev/headroom/internal/report/answer"
	reportplan "github.com/headroom-dev/headroom/internal/report/plan"
)

//go:embed assets
var assets embed.FS

// The page's routes. Everything under /api/ answers JSON; errors are
// {"error": "one sentence"} with a 4xx (the request) or 5xx (reading the
// store) status.
const (
	routeMeta     = "/api/meta"     // stores, dimensions, metrics, every point
	routeQuery    = "/api/query"    // x, y, series, objective, fix.PATH -> View
	routeRuns     = "/api/runs"     // store, runs=ID,ID -> []RunView
	routeRun      = "/api/run"      // store, id -> RunDetail
	routeAnswer   = "/api/answer"   // -> Home: each store's answer card and the plan
	routeSections = "/api/sections" // store -> the report's sections
	routeReport   = "/report/"      // /report/STORE -> the store's report page
)

func (e *Explorer) routes() {
	m := http.NewServeMux()
	sub, _ := fs.Sub(assets, "assets")
	static := http.FileServerFS(sub)
	m.Handle("GET /{$}", static)
	m.Handle("GET /app.js", static)
	m.Handle("GET /app.css", static)
	m.HandleFunc("GET "+routeMeta, e.serveMeta)
	m.HandleFunc("GET "+routeQuery, e.serveQuery)
	m.HandleFunc("GET "+routeRuns, e.serveRuns)
	m.HandleFunc("GET "+routeRun, e.serveRun)
	m.HandleFunc("GET "+routeAnswer, e.serveAnswer)
	m.HandleFunc("GET "+routeSections, e.serveSections)
	m.HandleFunc("GET "+routeReport+"{store}", e.serveReport)
	e.mux = m
}

// badRequest is an error the request caused (4xx); any other error is the
// explorer's failure to read a store (500).
type badRequest struct {
	status int
	err    error
}

func (b badRequest) Error() string { return b.err.Error() }

func bad(format string, args ...any) error {
	return badRequest{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

func writeJSON(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		status := http.StatusInternalServerError
		var b badRequest
		if errors.As(err, &b) {
			status = b.status
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	json.NewEncoder(w).Encode(v)
}

// StoreInfo describes one store.
type StoreInfo struct {
	Index     int    `json:"index"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Campaign  string `json:"campaign"`
	Runs      int    `json:"runs"`
	Completed int    `json:"completed"`
}

// PointView is a point with the index of its store.
type PointView struct {
	wildcard.Point
	Store int `json:"store"`
}

// Meta is what the page needs before its first query.
type Meta struct {
	Stores     []StoreInfo          `json:"stores"`
	LevelUnit  string               `json:"level_unit"`
	Dimensions []wildcard.Dimension `json:"dimensions"`
	Metrics    []MetricInfo         `json:"metrics"`
	Objective  wildcard.Metric      `json:"objective"`
	Points     []PointView          `json:"points"`
	// Money says how revenue and cost were computed (the SLA and cost
	// models, in words), and Notes what the figures rest on.
	Money []string `json:"money"`
	Notes []string `json:"notes,omitempty"`
}

func (e *Explorer) meta() Meta {
	m := Meta{LevelUnit: e.levelUnit, Dimensions: e.dims, Metrics: metricInfos(), Objective: e.analysis.Objective,
		Points: make([]PointView, 0, len(e.points)), Notes: e.analysis.Notes, Money: e.money()}
	for _, s := range e.sources {
		info := StoreInfo{Index: s.index, Name: s.name, Path: s.path, Campaign: s.r.Campaign().Name}
		for _, r := range s.r.Runs() {
			info.Runs++
			if r.Status == "completed" {
				info.Completed++
			}
		}
		m.Stores = append(m.Stores, info)
	}
	for _, p := range e.points {
		v := PointView{Point: p, Store: -1}
		if s := e.sourceOf(p.Source); s != nil {
			v.Store = s.index
		}
		m.Points = append(m.Points, v)
	}
	return m
}

func (e *Explorer) serveMeta(w http.ResponseWriter, _ *http.Request) { writeJSON(w, e.meta(), nil) }

func (e *Explorer) serveQuery(w http.ResponseWriter, r *http.Request) {
	v, err := e.Query(ParseRequest(r.URL.Query(), e.analysis.Objective))
	if err != nil {
		err = badRequest{http.StatusBadRequest, err}
	}
	writeJSON(w, v, err)
}

// store finds the store a request names by index.
func (e *Explorer) store(text string) (*source, error) {
	i, err := strconv.Atoi(text)
	if err != nil || i < 0 || i >= len(e.sources) {
		return nil, badRequest{http.StatusNotFound, fmt.Errorf("store %q is not one of the %d explored; use an index from %s", text, len(e.sources), routeMeta)}
	}
	return e.sources[i], nil
}

func (e *Explorer) serveRuns(w http.ResponseWriter, r *http.Request) {
	s, err := e.store(r.URL.Query().Get("store"))
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	var ids []int64
	for _, f := range strings.Split(r.URL.Query().Get("runs"), ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			writeJSON(w, nil, bad("runs must be run IDs separated by commas, not %q", r.URL.Query().Get("runs")))
			return
		}
		ids = append(ids, id)
	}
	runs, err := s.Runs(ids)
	if err != nil {
		err = badRequest{http.StatusNotFound, err}
	}
	writeJSON(w, runs, err)
}

func (e *Explorer) serveRun(w http.ResponseWriter, r *http.Request) {
	s, err := e.store(r.URL.Query().Get("store"))
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		writeJSON(w, nil, bad("id must be a run ID, not %q", r.URL.Query().Get("id")))
		return
	}
	d, err := s.Run(id)
	if err != nil && strings.Contains(err.Error(), "has no run") {
		err = badRequest{http.StatusNotFound, err}
	}
	writeJSON(w, d, err)
}

// StoreCard is one store's answer card; Error says why it could not be
// made (the page shows it in place of the card).
type StoreCard struct {
	Store int         `json:"store"`
	Name  string      `json:"name"`
	Card  answer.Card `json:"card"`
	Error string      `json:"error,omitempty"`
}

// Home is what the page opens on: each store's answer card, then the
// plan over all of them (or why there is none).
type Home struct {
	Cards       []StoreCard `json:"cards"`
	Plan        *plan.Plan  `json:"plan,omitempty"`
	PlanSummary string      `json:"plan_summary,omitempty"`
	PlanError   string      `json:"plan_error,omitempty"`
}

func (e *Explorer) serveAnswer(w http.ResponseWriter, _ *http.Request) {
	h := Home{Cards: make([]StoreCard, 0, len(e.sources))}
	for _, s := range e.sources {
		c, err := s.Card()
		sc := StoreCard{Store: s.index, Name: s.name, Card: c}
		if err != nil {
			sc.Error = err.Error()
		}
		h.Cards = append(h.Cards, sc)
	}
	if e.planErr != nil {
		h.PlanError = e.planErr.Error()
	} else {
		h.Plan, h.PlanSummary = &e.plan, reportplan.Summary(e.analysis, e.plan)
	}
	writeJSON(w, h, nil)
}

// SectionLink is one section of a store's report.
type SectionLink struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func (e *Explorer) serveSections(w http.ResponseWriter, r *http.Request) {
	s, err := e.store(r.URL.Query().Get("store"))
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	rep, _, err := s.Report()
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	out := make([]SectionLink, 0, len(rep.Sections))
	for _, sec := range rep.Sections {
		out = append(out, SectionLink{ID: sec.ID, Title: sec.Title})
	}
	writeJSON(w, out, nil)
}

func (e *Explorer) serveReport(w http.ResponseWriter, r *http.Request) {
	s, err := e.store(r.PathValue("store"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	_, html, err := s.Report()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(html)
}

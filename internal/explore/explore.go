// Package explore is the results explorer: an http.Handler that serves one
// page and its JSON over one or more results stores, opened read-only. The
// page lets a planner pick the plotted axes and metrics, fix or wildcard
// each configuration parameter (seed 003 §7.4, CloudXplor; the queries are
// internal/analysis/wildcard's), compare configurations side by side, and
// drill from a point down to its runs, their per-second timelines and
// their report sections. The home opens on each store's answer card
// (internal/report/answer).
//
// Everything the page needs is embedded in the binary (assets/): one HTML
// file, one script and one style sheet, with plots drawn as inline SVG by
// that script; the page fetches nothing but this handler's own JSON.
package explore

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/plan"
	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
	"github.com/headroom-dev/headroom/internal/results"
)

// Explorer serves the explorer over its stores. Its stores stay open
// until Close.
type Explorer struct {
	sources   []*source
	analysis  profit.Analysis
	plan      plan.Plan // the plan over every store (internal/analysis/plan)
	planErr   error
	points    []wildcard.Point
	dims      []wildcard.Dimension
	levelUnit string
	mux       *http.ServeMux
}

// StoreParam is the pseudo-parameter that tells points of several stores
// apart (the store's name); it is only added when there are several.
const StoreParam = "store"

// Open opens the results stores at paths (results.db files) read-only,
// prices their runs with the first store's analysis.plan settings and
// plans them (profit.FromAll, plan.Make), as headroom plan does: stores
// that measured different workloads are refused. Close closes the stores.
func Open(paths []string) (*Explorer, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no results to explore; pass one or more results directories printed by headroom run")
	}
	e := &Explorer{}
	ok := false
	defer func() {
		if !ok {
			e.Close()
		}
	}()
	names := map[string]int{}
	var rs []*results.Results
	for i, p := range paths {
		r, err := results.OpenReadOnly(p)
		if err != nil {
			return nil, err
		}
		s := &source{index: i, path: p, name: storeName(p), r: r}
		if n := names[s.name]; n > 0 {
			s.name = fmt.Sprintf("%s (%d)", s.name, n+1)
		}
		names[storeName(p)]++
		e.sources = append(e.sources, s)
		rs = append(rs, r)
	}
	a, err := profit.FromAll(rs, profit.Options{})
	if err != nil {
		return nil, err
	}
	e.analysis, e.levelUnit = a, a.LevelUnit
	// A store the planner cannot plan (one configuration, say) is still
	// explored; the home says why there is no plan.
	e.plan, e.planErr = plan.Make(a)
	e.points = a.Points()
	if len(e.sources) > 1 {
		for i := range e.points {
			if s := e.sourceOf(e.points[i].Source); s != nil {
				e.points[i].Params[StoreParam] = s.name
			}
		}
	}
	e.dims = wildcard.Dimensions(e.points)
	e.routes()
	ok = true
	return e, nil
}

// storeName is how the page names a store: its directory's name for a
// results.db (what headroom run printed), else the file's name.
func storeName(path string) string {
	if filepath.Base(path) == "results.db" {
		if d := filepath.Base(filepath.Dir(path)); d != "." && d != string(filepath.Separator) {
			return d
		}
	}
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// sourceOf finds the store a point came from by its path.
func (e *Explorer) sourceOf(path string) *source {
	for _, s := range e.sources {
		if s.r.Path() == path {
			return s
		}
	}
	return nil
}

// Warm starts computing every store's answer card and report in the
// background, one store after another, so that the page finds them ready
// (on a real campaign each takes seconds). Close waits for none of it: a
// computation cut short by Close is simply not used.
func (e *Explorer) Warm() {
	srcs := append([]*source(nil), e.sources...)
	go func() {
		for _, s := range srcs {
			s.warm()
		}
	}()
}

// Close closes every store.
func (e *Explorer) Close() error {
	var first error
	for _, s := range e.sources {
		if err := s.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	e.sources = nil
	return first
}

// ServeHTTP serves the page, its assets and its JSON.
func (e *Explorer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Everything is served from this handler; nothing may be framed by or
	// fetched from elsewhere.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	e.mux.ServeHTTP(w, r)
}

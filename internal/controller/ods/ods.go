// Package ods is the elastic controller's operational data store (seed 003
// ch. 8, seed-digest §7): one record per second of every run, past and
// present — the configuration, its cost, the SLA satisfaction at the
// sensor's thresholds, and the throughput of every request type. Earlier
// campaigns seed it (FromResults); the controller appends every second it
// observes (Append). Query is the empirical model: the configuration that
// has served a throughput like the forecast one, cheapest first.
package ods

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// Vector is a throughput per request type, in requests per second.
type Vector map[string]float64

// Total is the vector's total throughput.
func (v Vector) Total() float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// Record is one observed second.
type Record struct {
	Time   time.Time
	Config string  // the configuration's key (Key), e.g. "app.nodes=2, db.nodes=1"
	Cost   float64 // dollars per hour of the configuration
	// Sensitive and Normal are the shares of the second's requests
	// answered within the sensor's sensitive and normal thresholds.
	Sensitive  float64
	Normal     float64
	Throughput Vector
	Source     string // where it came from: "store.db run 7", or "live"
}

// Store holds the records; it is safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	records []Record
}

// New returns a store with the records.
func New(records ...Record) *Store {
	s := &Store{}
	s.Append(records...)
	return s
}

// Append adds observed seconds.
func (s *Store) Append(rs ...Record) {
	s.mu.Lock()
	s.records = append(s.records, rs...)
	s.mu.Unlock()
}

// Len is the number of records.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.records)
}

// Records returns a copy of the records in the order they were added.
func (s *Store) Records() []Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]Record(nil), s.records...)
}

// Query holds the empirical model's constants; DefaultQuery gives the
// seed's values.
type Query struct {
	// Alpha weighs a record's excess throughput over the forecast in the
	// distance (seed: 0, a record that served more than asked is as good as
	// one that served exactly that).
	Alpha float64
	// Radius keeps records whose distance to the forecast is at most this,
	// in requests/s (seed: 50).
	Radius float64
	// MinSupport is the least number of records a configuration needs
	// (seed: 30).
	MinSupport int
	// MinSLA is the least mean normal SLA satisfaction of a configuration's
	// records (seed: 0.9).
	MinSLA float64
}

// DefaultQuery is seed 003's query: alpha 0, 50 req/s, support 30, SLA 90%.
func DefaultQuery() Query { return Query{Alpha: 0, Radius: 50, MinSupport: 30, MinSLA: 0.9} }

// Check says what is wrong with the query constants, in one sentence.
func (q Query) Check() error {
	switch {
	case q.Alpha < 0 || math.IsNaN(q.Alpha):
		return fmt.Errorf("the distance weight alpha is %v; give 0 or more", q.Alpha)
	case !(q.Radius > 0):
		return fmt.Errorf("the query radius is %v req/s; give a positive number such as 50", q.Radius)
	case q.MinSupport < 1:
		return fmt.Errorf("the minimum support is %d; give at least 1 record", q.MinSupport)
	case !(q.MinSLA >= 0 && q.MinSLA <= 1):
		return fmt.Errorf("the minimum SLA satisfaction is %v; give a fraction in [0, 1]", q.MinSLA)
	}
	return nil
}

// Distance is the asymmetric distance of seed-digest §7 between a
// record's throughput x and the forecast y:
//
//	dist(x, y) = sqrt(Σ_i f(x_i, y_i)),  f = (x_i − y_i)²     if x_i ≤ y_i
//	                                       = α·(x_i − y_i)²   otherwise
//
// over every request type in either vector (a missing one is 0). A
// record that served less than forecast is penalised fully; one that
// served more only by α.
func (q Query) Distance(x, y Vector) float64 {
	var sum float64
	add := func(xi, yi float64) {
		d := (xi - yi) * (xi - yi)
		if xi > yi {
			d *= q.Alpha
		}
		sum += d
	}
	for op, xi := range x {
		add(xi, y[op])
	}
	for op, yi := range y {
		if _, ok := x[op]; !ok {
			add(0, yi)
		}
	}
	return math.Sqrt(sum)
}

// Group is one configuration's records within the radius.
type Group struct {
	Config  string
	Cost    float64   // mean cost per hour of its records
	Support int       // records within the radius
	MeanSLA float64   // mean normal SLA satisfaction of those records
	Last    time.Time // the most recent of those records
	// Rejected says why the group was not eligible ("" when it was).
	Rejected string
}

// Answer is the result of a query: the chosen configuration (Found) and
// every group considered, eligible ones first in the order they ranked.
type Answer struct {
	Found  bool
	Choice Group
	Groups []Group
	Within int // records within the radius over all configurations
}

// Find runs the empirical model's query for the forecast y: keep the
// records within Radius, group them by configuration, keep groups with
// at least MinSupport records and a mean SLA of at least MinSLA, order by
// cost, then by most recent record, and take the first.
func (s *Store) Find(q Query, y Vector) Answer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	type acc struct {
		cost, sla float64
		n         int
		last      time.Time
	}
	by := map[string]*acc{}
	var within int
	for _, r := range s.records {
		if q.Distance(r.Throughput, y) > q.Radius {
			continue
		}
		within++
		a := by[r.Config]
		if a == nil {
			a = &acc{}
			by[r.Config] = a
		}
		a.cost += r.Cost
		a.sla += r.Normal
		a.n++
		if r.Time.After(a.last) {
			a.last = r.Time
		}
	}
	ans := Answer{Within: within}
	for cfg, a := range by {
		g := Group{Config: cfg, Cost: a.cost / float64(a.n), Support: a.n, MeanSLA: a.sla / float64(a.n), Last: a.last}
		switch {
		case g.Support < q.MinSupport:
			g.Rejected = fmt.Sprintf("support %d < %d", g.Support, q.MinSupport)
		case g.MeanSLA < q.MinSLA:
			g.Rejected = fmt.Sprintf("mean SLA %.1f%% < %.1f%%", 100*g.MeanSLA, 100*q.MinSLA)
		}
		ans.Groups = append(ans.Groups, g)
	}
	sort.Slice(ans.Groups, func(i, j int) bool {
		a, b := ans.Groups[i], ans.Groups[j]
		if (a.Rejected == "") != (b.Rejected == "") {
			return a.Rejected == ""
		}
		if a.Cost != b.Cost {
			return a.Cost < b.Cost
		}
		if !a.Last.Equal(b.Last) {
			return a.Last.After(b.Last)
		}
		return a.Config < b.Config
	})
	if len(ans.Groups) > 0 && ans.Groups[0].Rejected == "" {
		ans.Found, ans.Choice = true, ans.Groups[0]
	}
	return ans
}

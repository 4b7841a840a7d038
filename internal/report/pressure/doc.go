// Package pressure renders the service level pressure assessment of
// internal/analysis/pressure (seed 000, AISLE; seed-digest §4): for the
// terminal (headroom assess) and as report sections (SLP boxplots, tables
// and time series, recommendations, before/after, cost, normalisation
// fits). It only lays out findings; it computes nothing and never writes.
package pressure

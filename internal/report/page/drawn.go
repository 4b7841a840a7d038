package page

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// maxRepsDrawn is how many repetitions a level's interval charts draw, one
// line each: beyond a handful the lines hide each other, and a campaign of
// 100 repetitions per level made a page of 16 MB.
const maxRepsDrawn = 8

// drawnReps picks the repetitions a level's interval charts draw when
// there are more than maxRepsDrawn: the first and the last (a drift over
// the campaign shows between them), the lowest and the highest mean
// throughput, the median one, and the one with the highest interval p99,
// so that the extremes every chart is read for stay on it. The others are
// in the level's box plot and heat map, which summarise every repetition.
// note says which were drawn and why ("" when all are).
func drawnReps(rss []runSeries) (drawn []runSeries, note string) {
	if len(rss) <= maxRepsDrawn {
		return rss, ""
	}
	type pick struct {
		i   int
		why string
	}
	mean := func(rs runSeries) float64 {
		var sum float64
		n := 0
		for _, v := range rs.tput {
			if !math.IsNaN(v) {
				sum += v
				n++
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return sum / float64(n)
	}
	peak := func(rs runSeries) float64 {
		m := math.Inf(-1)
		for _, v := range rs.maxP99 {
			if !math.IsNaN(v) && v > m {
				m = v
			}
		}
		return m
	}
	byTput := make([]int, len(rss))
	for i := range byTput {
		byTput[i] = i
	}
	means := make([]float64, len(rss))
	for i, rs := range rss {
		means[i] = mean(rs)
		if math.IsNaN(means[i]) {
			means[i] = math.Inf(-1)
		}
	}
	sort.SliceStable(byTput, func(a, b int) bool { return means[byTput[a]] < means[byTput[b]] })
	worst, worstP99 := 0, math.Inf(-1)
	for i, rs := range rss {
		if p := peak(rs); p > worstP99 {
			worst, worstP99 = i, p
		}
	}
	picks := []pick{{0, "the first"}, {len(rss) - 1, "the last"}, {byTput[0], "the lowest mean throughput"},
		{byTput[len(byTput)-1], "the highest mean throughput"}, {byTput[len(byTput)/2], "the median throughput"}, {worst, "the highest interval p99"}}
	why := map[int][]string{}
	var order []int
	for _, p := range picks {
		if why[p.i] == nil {
			order = append(order, p.i)
		}
		why[p.i] = append(why[p.i], p.why)
	}
	sort.Ints(order)
	parts := make([]string, 0, len(order))
	for _, i := range order {
		drawn = append(drawn, rss[i])
		parts = append(parts, fmt.Sprintf("%s (%s)", repName(rss[i]), strings.Join(why[i], ", ")))
	}
	note = fmt.Sprintf("%d of the level's %d repetitions drawn: %s; the box plot and heat map above hold every repetition", len(drawn), len(rss), strings.Join(parts, "; "))
	return drawn, note
}

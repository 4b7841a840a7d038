package workload

// hotspot is YCSB's hotspot distribution (seed-digest §1) over [0, n): the
// first hot = floor(n * HotspotDataFraction) keys form the hot set; a fraction
// HotspotOpnFraction of draws is uniform over the hot set and the rest is
// uniform over the cold keys [hot, n). So a hot key has probability
// opn/hot and a cold one (1-opn)/(n-hot). An empty hot or cold set takes no
// draws.
type hotspot struct {
	hot, cold uint64 // sizes of the hot set and of the rest
	opn       float64
}

func newHotspot(n uint64, dataFraction, opnFraction float64) hotspot {
	hot := uint64(float64(n) * dataFraction)
	if hot > n {
		hot = n
	}
	return hotspot{hot: hot, cold: n - hot, opn: opnFraction}
}

func (h *hotspot) next(r *rng) uint64 {
	switch {
	case h.cold == 0:
		return r.below(h.hot)
	case h.hot == 0:
		return r.below(h.cold)
	case r.float() < h.opn:
		return r.below(h.hot)
	default:
		return h.hot + r.below(h.cold)
	}
}

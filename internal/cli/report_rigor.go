package cli

import "github.com/headroom-dev/headroom/internal/report/rigor"

// The capacity and measurement-rigor sections (internal/report/rigor):
// load-response curves with knees, seed 001's variation verdicts, scaling
// across deployments and the capacity probe. Each appears only when the
// results hold data for it.
func init() {
	registerSection(100, rigor.Capacity)
	registerSection(200, rigor.Variability)
	registerSection(300, rigor.Scaling)
	registerSection(400, rigor.Probe)
}

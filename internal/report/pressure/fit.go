package pressure

import (
	"fmt"

	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
)

// fitSentence says what a fit means in one or two sentences.
func fitSentence(f assess.Fit) string {
	if f.Ops == nil {
		return fmt.Sprintf("%s and %s could not be aligned: %s", f.Provider, f.Client, f.OpsErr)
	}
	s := fmt.Sprintf("%s reports %.3g x the operations of %s (least squares over %d aligned intervals, relative RMS %.1f%%)",
		f.Provider, f.Ops.Factor, f.Client, f.Ops.Points, 100*f.Ops.RelRMS)
	if f.Bytes != nil {
		s += fmt.Sprintf(" and %.3g x its bandwidth", f.Bytes.Factor)
	}
	s += "."
	if f.Unit != nil {
		s += fmt.Sprintf(" Counted as normalized operations, the client's series matches the provider's best with a %g KiB unit (relative RMS %.1f%%)", f.Unit.UnitKiB, 100*f.Unit.RelRMS)
		if f.Unit.UnitKiB != 256 {
			s += ", not the documented 256 KiB (seed 000 §5.3 found 16 KiB)"
		}
		s += "."
	}
	return s
}

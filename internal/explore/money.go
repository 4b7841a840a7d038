package explore

import (
	"fmt"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/profit"
)

// money says in words how the figures in dollars were computed: the SLA's
// revenue steps and the cost model, as the analysis used them.
func (e *Explorer) money() []string {
	a := e.analysis
	out := []string{"revenue per request by response time: " + stepsText(a.SLA.Steps)}
	var ops []string
	for op := range a.SLA.Ops {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		out = append(out, op+" requests: "+stepsText(a.SLA.Ops[op]))
	}
	if d := a.SLA.ErrorDollars; d != nil {
		out = append(out, fmt.Sprintf("each failed or dropped request earns %.4f cent", *d*profit.CentsPerDollar))
	}
	switch a.Cost.Basis {
	case profit.Catalog:
		out = append(out, "cost: the lab catalog's hourly prices of each configuration's hosts")
	case profit.NodeHour:
		out = append(out, fmt.Sprintf("cost: $%g per node-hour", a.Cost.NodeHour))
	case profit.Table:
		out = append(out, "cost: a fixed price per hour and a price per million requests per configuration (analysis.plan.cost.configs)")
	}
	return out
}

func stepsText(s profit.Steps) string {
	var parts []string
	for _, st := range s {
		c := st.Dollars * profit.CentsPerDollar
		if st.UpTo == 0 {
			parts = append(parts, fmt.Sprintf("slower: %.4f cent", c))
			continue
		}
		parts = append(parts, fmt.Sprintf("≤ %v: %.4f cent", st.UpTo, c))
	}
	return strings.Join(parts, ", ")
}

package explore

import (
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
)

// MetricInfo describes a metric for the page's selects and axes.
type MetricInfo struct {
	Name           wildcard.Metric `json:"name"`
	Label          string          `json:"label"`
	HigherIsBetter bool            `json:"higher_is_better"`
}

// metricLabels are the axis labels of the metrics, with their units.
var metricLabels = map[wildcard.Metric]string{
	wildcard.Throughput:      "throughput (req/s)",
	wildcard.P50:             "p50 response time (ms)",
	wildcard.P99:             "p99 response time (ms)",
	wildcard.CostPerHour:     "cost ($/h)",
	wildcard.CostPerReqMonth: "cost ($/month per req/s)",
	wildcard.RevenuePerHour:  "revenue ($/h)",
	wildcard.ProfitPerHour:   "profit ($/h)",
}

func metricLabel(m wildcard.Metric) string {
	if l, ok := metricLabels[m]; ok {
		return l
	}
	return string(m)
}

// metricInfos lists every metric in wildcard's display order.
func metricInfos() []MetricInfo {
	out := make([]MetricInfo, 0, len(wildcard.Metrics))
	for _, m := range wildcard.Metrics {
		out = append(out, MetricInfo{Name: m, Label: metricLabel(m), HigherIsBetter: wildcard.HigherIsBetter(m)})
	}
	return out
}

func metricNames() string {
	var s []string
	for _, m := range wildcard.Metrics {
		s = append(s, string(m))
	}
	return strings.Join(s, ", ")
}

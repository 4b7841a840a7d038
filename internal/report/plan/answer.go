package plan

import (
	"reflect"

	"github.com/headroom-dev/headroom/internal/analysis/plan"
	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/report/answer"
	"github.com/headroom-dev/headroom/internal/results"
)

// The plan joins the report's answer card through answer's hook.
func init() { answer.PlanLines = AnswerLines }

// AnswerLines is the answer card's plan line: the configuration to run at
// each workload, for the campaigns that get a plan section; none when the
// plan cannot be made (its section says why).
func AnswerLines(r *results.Results) ([]answer.Line, error) {
	ts := r.Treatments()
	if len(ts) < 2 && reflect.DeepEqual(ts[0].Analysis.Plan, results.Plan{}) || len(r.AllCompletedRuns()) == 0 {
		return nil, nil
	}
	a, err := profit.FromResults(r, profit.Options{})
	if err != nil {
		return nil, nil
	}
	p, err := plan.Make(a)
	if err != nil {
		return nil, nil
	}
	return []answer.Line{{Topic: answer.Plan, Text: lineText(a, p), Evidence: "plan"}}, nil
}

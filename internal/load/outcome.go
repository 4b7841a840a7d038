package load

import (
	"fmt"

	"github.com/headroom-dev/headroom/internal/target"
)

// Failure says in one sentence why a run measured nothing when not one of
// its requests (warmup or measured) succeeded; it is "" when one did, when
// none was sent, and for an interrupted run. It tells a target that took
// the requests and never answered (timeouts, or still unanswered when the
// run ended) from one that never answered at all (every request failed to
// connect; the first socket error is kept) and from one that answered every
// request with an error.
func (r *Result) Failure() string {
	if r.Interrupted {
		return ""
	}
	w, m := r.Warmup, r.Measured
	errs := w.Errors + m.Errors
	if w.Completed+m.Completed > 0 || errs+r.Unfinished == 0 {
		return ""
	}
	timeouts, conn := r.ErrorKinds["timeout"], r.ErrorKinds[target.KindConnection]
	switch {
	case errs > timeouts+conn:
		return fmt.Sprintf("the target answered all %d requests with errors and none succeeded (first error: %s)", errs, r.FirstError)
	case conn > 0:
		return fmt.Sprintf("the target never answered: %d requests could not connect or lost their connection (first error: %s)", conn, r.FirstError)
	}
	return fmt.Sprintf("the target accepted connections but answered none within the timeout: %d requests timed out and %d were still unanswered when the run ended", timeouts, r.Unfinished)
}

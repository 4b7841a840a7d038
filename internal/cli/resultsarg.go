package cli

import "github.com/headroom-dev/headroom/internal/results"

// withResults opens the results named by a RESULTS_DIR|results.db
// argument, as the commands that read a finished campaign take it, hands
// them to use and closes them when use returns.
func withResults(arg string, use func(r *results.Results) error) error {
	path, err := storePath(arg)
	if err != nil {
		return err
	}
	r, err := results.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	return use(r)
}

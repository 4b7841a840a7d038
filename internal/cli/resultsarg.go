package cli

import "github.com/headroom-dev/headroom/internal/results"

// resultsFromArg opens the results named by a RESULTS_DIR|results.db
// argument, as the commands that read a finished campaign take it.
func resultsFromArg(arg string) (*results.Results, error) {
	path, err := storePath(arg)
	if err != nil {
		return nil, err
	}
	return results.Open(path)
}

package results

import "github.com/headroom-dev/headroom/internal/store"

// ClientDelay is one run's client-side delay (store.ClientDelay).
type ClientDelay = store.ClientDelay

// ClientDelays returns the client-side delay of every run that recorded
// one, by run ID; empty for stores written before the figure existed.
func (r *Results) ClientDelays() (map[int64]ClientDelay, error) {
	return r.st.ClientDelays()
}

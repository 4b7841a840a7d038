package infra

// Unthrottler lifts its hosts' volume and CPU limits for a while, as a
// provider that restores volumes from snapshots would deliver the data
// without charging its loading against them: the campaign lifts them while
// it populates the target (the lab's populate_unthrottled) and puts them
// back before the first run.
type Unthrottler interface {
	// Unthrottle lifts every host's volume and CPU limits.
	Unthrottle() error
	// Rethrottle puts them back as defined.
	Rethrottle() error
}

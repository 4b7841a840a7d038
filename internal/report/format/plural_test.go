package format

import "testing"

// Counted nouns take their English plural: "6 series assessed", not
// "6 seriess" (a report printed that).
func TestPluralOfCountedNouns(t *testing.T) {
	for _, c := range []struct {
		n          int
		word, want string
	}{
		{1, "series", "1 series"},
		{6, "series", "6 series"},
		{2, "run", "2 runs"},
		{0, "repetition", "0 repetitions"},
		{3, "process", "3 processes"},
		{2, "box", "2 boxes"},
		{2, "batch", "2 batches"},
		{4, "query", "4 queries"},
		{4, "key", "4 keys"},
		{2, "write check", "2 write checks"},
		{2, "session-guarantee violation", "2 session-guarantee violations"},
	} {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}

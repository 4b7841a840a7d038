package explore

import (
	"bytes"
	"sync"

	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/answer"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// source is one results store the explorer reads. Its report and answer
// card are computed on first use and kept: the store does not change
// under the explorer's reading (it is a finished campaign; a campaign
// still running shows what it had when the explorer started, except for
// the runs' timelines, which are read when asked for).
type source struct {
	index int
	name  string
	path  string
	r     *results.Results

	// mu serialises the analyses run over r on behalf of concurrent
	// requests: the report's analyses, the card and timelines.
	mu sync.Mutex

	reportOnce sync.Once
	report     *page.Report
	reportHTML []byte
	reportErr  error

	cardOnce sync.Once
	card     answer.Card
	cardErr  error
}

// Report is the store's whole report (report.Build), as report.html
// would show it, with its HTML.
func (s *source) Report() (*page.Report, []byte, error) {
	s.reportOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		rep, err := report.Build(s.r)
		if err != nil {
			s.reportErr = err
			return
		}
		var b bytes.Buffer
		if err := page.WriteHTML(&b, rep); err != nil {
			s.reportErr = err
			return
		}
		s.report, s.reportHTML = rep, b.Bytes()
	})
	return s.report, s.reportHTML, s.reportErr
}

// warm computes the answer card and then the report, so that the page
// finds them ready: on a real campaign they take seconds to tens of
// seconds (the pressure and bottleneck analyses run over every run).
func (s *source) warm() {
	s.Card()
	s.Report()
}

// Card is the store's answer card (answer.Build).
func (s *source) Card() (answer.Card, error) {
	s.cardOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.card, s.cardErr = answer.Build(s.r)
	})
	return s.card, s.cardErr
}

package page

import (
	"github.com/headroom-dev/headroom/internal/report/answer"
)

// AnswerSectionID is the answer card's section: always the report's first.
const AnswerSectionID = "answer"

// Answers is the answer card's block: one item per answer, then the
// findings that need attention.
type Answers struct {
	Items []AnswerItem `json:"items"`
}

// AnswerItem is one line of the card. Href is the anchor of its evidence
// ("#capacity"), "" when the report has no such section; Alert marks a
// finding that needs attention (drawn in red).
type AnswerItem struct {
	Topic     string `json:"topic"`
	Treatment string `json:"treatment,omitempty"`
	Text      string `json:"text"`
	Href      string `json:"href,omitempty"`
	Alert     bool   `json:"alert,omitempty"`
}

// PutAnswer makes the card c the report's first section. Call it after
// every other section is added: a line links to its evidence only when
// the report holds that section.
func (r *Report) PutAnswer(c answer.Card) {
	have := map[string]bool{}
	for _, s := range r.Sections {
		have[s.ID] = true
	}
	item := func(l answer.Line, alert bool) AnswerItem {
		it := AnswerItem{Topic: l.Topic, Treatment: l.Treatment, Text: l.Text, Alert: alert}
		if have[l.Evidence] {
			it.Href = "#" + l.Evidence
		}
		return it
	}
	var a Answers
	for _, l := range c.Lines() {
		a.Items = append(a.Items, item(l.Line, l.Alert))
	}
	sec := Section{ID: AnswerSectionID, Title: "Answers", Summary: c.Summary()}
	if len(a.Items) > 0 {
		sec.Summary = "What the measurements answer, each with a link to its evidence below. " + sec.Summary
	}
	if len(a.Items) > 0 {
		sec.Blocks = []Block{{Answers: &a}}
	}
	r.Sections = append([]Section{sec}, r.Sections...)
}

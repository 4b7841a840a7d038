package page

import (
	"bytes"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/report/answer"
)

func TestPutAnswerLeadsAndLinksOnlyToPresentSections(t *testing.T) {
	r := &Report{Title: "t"}
	r.Add(Section{ID: "runs", Title: "Runs"}, Section{ID: "capacity", Title: "Capacity"})
	r.PutAnswer(answer.Card{
		Answers:   []answer.Line{{Topic: answer.Capacity, Text: "100 ok/s", Evidence: "capacity"}, {Topic: answer.Pressure, Text: "none", Evidence: "slp"}},
		Attention: []answer.Line{{Topic: answer.FailedRuns, Text: "1 run <failed>", Evidence: "runs"}},
	})
	if r.Sections[0].ID != AnswerSectionID || len(r.Sections) != 3 {
		t.Fatalf("sections %+v", r.Sections)
	}
	items := r.Sections[0].Blocks[0].Answers.Items
	if items[0].Href != "#capacity" || items[1].Href != "" || items[2].Href != "#runs" || !items[2].Alert || items[0].Alert {
		t.Errorf("items %+v", items)
	}
	if !strings.Contains(r.Sections[0].Summary, "1 finding in red needs attention") {
		t.Errorf("summary %q", r.Sections[0].Summary)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<li class="alert"><span class="topic">Failed runs:</span>1 run &lt;failed&gt;. <a href="#runs">evidence</a></li>`,
		`<span class="topic">Capacity:</span>100 ok/s. <a href="#capacity">evidence</a>`, `<span class="topic">Pressure:</span>none.</li>`} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	if strings.Index(html, `id="answer"`) > strings.Index(html, `id="runs"`) {
		t.Error("the answer card is not the first section of the page")
	}
	// A link to nothing is an error, not a dead link.
	r.Sections[0].Blocks[0].Answers.Items[1].Href = "#slp"
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), `links Pressure (none) to "#slp"`) {
		t.Errorf("Validate = %v", err)
	}
}

func TestPutAnswerEmptyCard(t *testing.T) {
	r := &Report{Title: "t"}
	r.PutAnswer(answer.Card{})
	if len(r.Sections) != 1 || len(r.Sections[0].Blocks) != 0 || !strings.Contains(r.Sections[0].Summary, "nothing the analyses can answer") {
		t.Errorf("%+v", r.Sections)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
}

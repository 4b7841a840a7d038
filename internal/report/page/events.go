package page

import (
	"fmt"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/store"
)

// eventDetailLen caps an event's detail in the report; headroom export -t
// events keeps it whole.
const eventDetailLen = 240

func eventsSection(evs []store.Event, runs []store.Run, set setting) Section {
	sec := Section{ID: "events", Title: "Events"}
	if len(evs) == 0 {
		sec.Summary = "No events were recorded."
		return sec
	}
	kinds := map[string]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", kinds[k], k)
	}
	sec.Summary = fmt.Sprintf("%s: %s.", format.Plural(len(evs), "event"), strings.Join(parts, ", "))
	byID := map[int64]store.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	start := evs[0].Time
	var rows [][]Cell
	for _, e := range evs {
		run := Text("campaign")
		if r, ok := byID[e.RunID]; ok {
			run = Number(fmt.Sprintf("%d (%s, rep %d)", r.ID, format.LoadText(set.model, r.Level), r.Repetition), float64(r.ID))
		} else if e.RunID != 0 {
			run = Number(fmt.Sprint(e.RunID), float64(e.RunID))
		}
		off := e.Time.Sub(start).Seconds()
		rows = append(rows, []Cell{Text(e.Time.UTC().Format("2006-01-02 15:04:05.000")), Number(format.Num(off), off), run, Text(e.Kind), Text(format.Truncate(e.Detail, eventDetailLen))})
	}
	sec.Blocks = append(sec.Blocks, Block{Table: &Table{ID: "events-table", Title: "Events in time order",
		Source:  fmt.Sprintf("from the event table; details longer than %d characters are cut here (headroom export -t events has them whole)", eventDetailLen),
		Columns: []Column{{Title: "time (UTC)"}, {Title: "since first event (s)", Unit: "s"}, {Title: "run"}, {Title: "kind"}, {Title: "detail"}}, Rows: rows}})
	return sec
}

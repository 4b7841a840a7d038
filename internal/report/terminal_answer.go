package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/headroom-dev/headroom/internal/report/answer"
)

// TerminalAnswers prints the answer card in the order every renderer
// shows it (answer.Card.Lines: lost writes first), findings that need
// attention marked "!", under the card's one summary sentence. Each line
// names the report section with its evidence. Nothing is printed for an
// empty card.
func TerminalAnswers(w io.Writer, c answer.Card) {
	if len(c.Answers) == 0 && len(c.Attention) == 0 {
		return
	}
	fmt.Fprintln(w, "\nAnswers (evidence: the named section of report.html)")
	fmt.Fprintln(w, "  "+c.Summary())
	line := func(mark string, l answer.Line) {
		topic := l.Topic
		if l.Treatment != "" {
			topic += " · " + l.Treatment
		}
		text := l.Text
		if l.Evidence != "" {
			text += " [#" + l.Evidence + "]"
		}
		fmt.Fprintf(w, "%s %-16s %s\n", mark, topic, strings.TrimSpace(text))
	}
	for _, l := range c.Lines() {
		mark := " "
		if l.Alert {
			mark = "!"
		}
		line(mark, l.Line)
	}
}

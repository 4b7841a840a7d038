package browsertest

import (
	"encoding/json"
	"strings"
	"testing"
)

// LayoutCheck is a DOM check (for Browser.Open) of how a report is laid
// out: the page's width against the window's, every element that sticks
// out of the window (outside a scroll container or a pre, whose content may
// be wider: they scroll), the tables that scroll inside their section, the
// first section's ID and the answer card's links with those that lead
// nowhere.
const LayoutCheck = `(() => {
  const W = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('body *')) {
    const p = el.parentElement;
    if (p && p.closest('.scroll, pre, svg')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > W + 1 || r.left < -1) {
      wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal === undefined ? '.' + el.className : '') + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
    }
  }
  const scrolling = [...document.querySelectorAll('.scroll')].filter(s => s.scrollWidth > s.clientWidth + 1).map(s => (s.closest('figure') || {}).id || '?');
  const first = document.querySelector('main > section');
  const links = [...document.querySelectorAll('#answer a')].map(a => a.getAttribute('href'));
  return JSON.stringify({
    window: W,
    page: document.documentElement.scrollWidth,
    wide: wide.slice(0, 20),
    scrolling,
    first: first ? first.id : '',
    navFirst: (document.querySelector('nav a') || {textContent: ''}).textContent,
    links,
    broken: links.filter(h => !h.startsWith('#') || !document.getElementById(h.slice(1))),
  });
})()`

// Layout is LayoutCheck's answer.
type Layout struct {
	Window, Page int
	Wide         []string // elements outside the window, with their extent
	Scrolling    []string // figures whose table scrolls inside its section
	First        string   // the first section's ID
	NavFirst     string
	Links        []string // the answer card's links
	Broken       []string // those that lead to no element
}

// CheckLayout reads LayoutCheck's answer from a load and fails the test on
// a page wider than its window, an element outside it, a first section
// other than first (when first is not ""), or an answer-card link that
// leads nowhere. It returns the layout for further checks.
func CheckLayout(t *testing.T, load Load, first string) Layout {
	t.Helper()
	var l Layout
	if err := json.Unmarshal(load.DOM, &l); err != nil {
		t.Fatalf("layout check: %v (%s)", err, load.DOM)
	}
	if l.Page > l.Window || len(l.Wide) > 0 {
		t.Errorf("in a %d px window the page is %d px wide; elements outside the window:\n%s", l.Window, l.Page, strings.Join(l.Wide, "\n"))
	}
	if first != "" && l.First != first {
		t.Errorf("the first section is %q, want %q", l.First, first)
	}
	if len(l.Broken) > 0 {
		t.Errorf("answer card links lead nowhere: %v (of %v)", l.Broken, l.Links)
	}
	return l
}

package spec

import (
	"fmt"
	"math"
	"time"
)

// load checks the load section under its model.
func (c *checker) load(s *Spec) {
	l := &s.Load
	switch l.Model {
	case "open":
		c.forbid("closed", "load.clients", "load.think_time")
		switch {
		case l.Schedule != nil:
			c.schedule(s)
		case l.Rates == nil:
			c.fail("load.rates", "required for the open model; add rates: [100, 200, 400] (requests per second), or a schedule: of rates over the run")
		case l.Rates.Relative != nil && l.Rates.Relative.Base == 0:
			// The rates are known once the probe ran (relative.go).
		default:
			c.levels("load.rates", l.Rates, s)
		}
		c.oneOf("load.arrival", l.Arrival, "poisson", "constant")
		c.atLeast("load.max_in_flight", int64(l.MaxInFlight), 1)
		c.notNegative("load.late_after", l.LateAfter)
		switch late, drop := l.LateAfter.Duration, l.DropAfter.Duration; {
		case drop > late:
		case c.has("load.late_after") && !c.has("load.drop_after"):
			c.fail("load.late_after", "%v must be shorter than drop_after (%v by default); lower late_after or raise drop_after", late, drop)
		default:
			c.fail("load.drop_after", "%v must be longer than late_after (%v); raise drop_after or lower late_after", drop, late)
		}
	case "closed":
		c.forbid("open", "load.rates", "load.arrival", "load.schedule", "load.max_in_flight", "load.late_after", "load.drop_after")
		switch {
		case l.Clients == nil:
			c.fail("load.clients", "required for the closed model; add clients: [1, 2, 4, 8]")
		case l.Clients.Relative != nil: // refused by checkRelative
		default:
			c.levels("load.clients", l.Clients, s)
		}
		c.notNegative("load.think_time", l.ThinkTime)
	case "":
		c.fail("load.model", "required; add model: open (fixed request rates) or model: closed (fixed numbers of clients)")
	default:
		c.oneOf("load.model", l.Model, "open", "closed")
	}
	c.checkSweep(s)    // sweep.go
	c.checkRelative(s) // relative.go
	if l.Agents != nil {
		c.agents(s) // agents.go
	}
	c.notNegative("load.dead_after", l.DeadAfter)
	if l.Timeout.Duration < time.Millisecond {
		c.fail("load.timeout", "must be at least 1ms, got %v", l.Timeout.Duration)
	}
}

// levels checks rates (> 0, at most what the engine can pace, at least one
// request per measured phase) or client counts (whole numbers from 1 to
// what memory holds). A bad range is reported once, rather than once per
// level it expands to.
func (c *checker) levels(path string, lv *Levels, s *Spec) {
	clients := path == "load.clients"
	isRange := c.has(path + ".from")
	for i, v := range lv.Values {
		bad := v <= 0
		if clients {
			bad = v < 1 || v != math.Trunc(v)
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		if isRange {
			p = path
		}
		switch {
		case !bad:
			ok := true
			if clients {
				ok = c.slots(p, v, s, "clients")
			} else {
				ok = c.rate(p, v, s)
			}
			if !ok && isRange {
				return
			}
		case isRange && clients:
			c.fail(path, "the range includes %g clients; use whole numbers of clients, 1 or more", v)
			return
		case isRange:
			c.fail(path, "the range includes %g requests per second; start it above 0", v)
			return
		case clients:
			c.fail(p, "must be a whole number of clients, 1 or more, got %g", v)
		default:
			c.fail(p, "must be greater than 0 requests per second, got %g", v)
		}
	}
}

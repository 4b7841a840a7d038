package profit

import (
	"fmt"
	"math"
)

// DefaultNodeHour is seed 003 §7.5's price of a server node: $4 per hour.
const DefaultNodeHour = 4.0

// HoursPerMonth prices a month as 730 hours, as the lab catalog and the
// cost analysis do.
const HoursPerMonth = 730

// Cost bases.
const (
	Catalog  = "catalog"   // the lab hosts' recorded hourly prices (instances and volumes)
	NodeHour = "node_hour" // a fixed price per node-hour
	Table    = "table"     // a fixed and a variable cost per configuration
)

// CostModel prices a configuration per hour of operation.
type CostModel struct {
	Basis    string                `json:"basis"`
	NodeHour float64               `json:"node_hour,omitempty"` // $ per node-hour (basis node_hour)
	Table    map[string]ConfigCost `json:"table,omitempty"`     // configuration name -> cost (basis table)
}

// ConfigCost is one configuration's cost in a table: a fixed part per hour
// and a variable part per million requests served (seed 003 §7.5: "a
// direct mapping of each configuration to a fixed and variable cost
// component").
type ConfigCost struct {
	FixedPerHour       float64 `json:"fixed_per_hour"`
	PerMillionRequests float64 `json:"per_million_requests,omitempty"`
}

// Config is a configuration as the cost model sees it.
type Config struct {
	Name  string `json:"name"`  // the treatment
	Nodes int    `json:"nodes"` // hosts it runs on (lab hosts, cluster nodes, or 1)
	// CatalogPerHour is the sum of its hosts' recorded hourly prices
	// (volumes spread over 730 h); NaN when the results have none.
	CatalogPerHour float64 `json:"-"`
}

// PerHour is what the configuration costs per hour while serving
// reqPerSec successful requests per second.
func (m CostModel) PerHour(c Config, reqPerSec float64) (float64, error) {
	switch m.Basis {
	case Catalog:
		if math.IsNaN(c.CatalogPerHour) {
			return math.NaN(), fmt.Errorf("configuration %q has no catalog prices (it did not run in a lab); use cost basis node_hour or table", c.Name)
		}
		return c.CatalogPerHour, nil
	case NodeHour:
		return float64(c.Nodes) * m.NodeHour, nil
	case Table:
		cc, ok := m.Table[c.Name]
		if !ok {
			return math.NaN(), fmt.Errorf("the cost table has no entry for configuration %q; add it under analysis.plan.cost.configs", c.Name)
		}
		return cc.FixedPerHour + cc.PerMillionRequests*reqPerSec*3600/1e6, nil
	}
	return math.NaN(), fmt.Errorf("cost basis %q is unknown; use %s, %s or %s", m.Basis, Catalog, NodeHour, Table)
}

// Describe says how the model prices, in a few words.
func (m CostModel) Describe() string {
	switch m.Basis {
	case Catalog:
		return "the lab hosts' catalog prices per hour (instances, volumes spread over 730 h)"
	case NodeHour:
		return fmt.Sprintf("$%g per node-hour", m.NodeHour)
	case Table:
		return "a fixed $/h plus a variable $ per million requests per configuration (analysis.plan.cost.configs)"
	}
	return m.Basis
}

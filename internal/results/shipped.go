package results

import "sync"

// The lab events of campaigns run before the lab event recorded its
// catalog hold only the hosts' types and prices. An analysis that needs a
// type's limits (a volume type's bandwidth cap, the IOPS price) may then
// use the catalog this build ships, where its prices agree with the
// recorded ones. The lab package, which owns that catalog, registers it;
// a program without the lab has none.
var (
	shippedMu sync.Mutex
	shipped   func() *Catalog
)

// SetShippedCatalog registers the function that returns the shipped lab
// catalog (internal/lab does, when it is linked in).
func SetShippedCatalog(f func() *Catalog) {
	shippedMu.Lock()
	defer shippedMu.Unlock()
	shipped = f
}

// ShippedCatalog returns a copy of the shipped lab catalog, nil when none
// is registered.
func ShippedCatalog() *Catalog {
	shippedMu.Lock()
	f := shipped
	shippedMu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

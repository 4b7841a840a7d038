package results

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// The region labels of lab hosts come back from the lab event, as the lab
// provider describes its hosts.
func TestHostRegions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "results.db")
	st, err := store.Create(p, store.Campaign{Name: "regions", SpecYAML: "name: regions\n"})
	if err != nil {
		t.Fatal(err)
	}
	detail := `{"name":"l","hosts":[{"name":"db1","type":"small","region":"eu"},{"name":"db2","type":"small","region":"us"},{"name":"c","type":"small"}]}`
	if err := st.AddEvent(store.Event{Time: time.Now(), Kind: EventLab, Detail: detail}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.HostRegions()
	if want := map[string]string{"db1": "eu", "db2": "us"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("HostRegions = %v, %v; want %v", got, err, want)
	}
}

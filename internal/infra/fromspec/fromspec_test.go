package fromspec

import (
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/infra/labinfra"
	"github.com/headroom-dev/headroom/internal/spec"
	_ "github.com/headroom-dev/headroom/internal/target/null"
)

func parse(t *testing.T, src string) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("a.yaml", []byte("name: camp\ntarget: {type: null}\nworkload: {ycsb: c}\nload: {model: open, rates: [1]}\n"+src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestProviderOfSpec(t *testing.T) {
	p, err := Provider(parse(t, ""))
	if err != nil || p.Name() != "local" || !Local(p) {
		t.Fatalf("a spec without a lab: %v, %v", p, err)
	}
	p, err = Provider(parse(t, "lab: {hosts: [{name: db1, type: small}]}\n"))
	if err != nil || p.Name() != "lab" || Local(p) {
		t.Fatalf("a spec with a lab: %v, %v", p, err)
	}
	if _, ok := p.(*labinfra.Provider); !ok {
		t.Fatalf("%T", p)
	}
	s := parse(t, "lab: {hosts: [{name: db1, type: small}]}\n")
	s.Lab.Catalog = "missing-catalog.yaml"
	if _, err := Provider(s); err == nil || !strings.HasPrefix(err.Error(), "lab: ") || !strings.Contains(err.Error(), "missing-catalog.yaml") {
		t.Errorf("a missing catalog: %v", err)
	}
}

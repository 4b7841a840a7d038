package history

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// Whatever ReadJSONL accepts is valid and survives a round trip.
func FuzzReadJSONL(f *testing.F) {
	f.Add(`{"process":0,"f":"write","key":"k1","value":1,"invoke_ns":100,"complete_ns":300,"outcome":"ok","level":"QUORUM"}`)
	f.Add(`{"process":1,"f":"read","key":"k","value":-1,"invoke_ns":5,"complete_ns":5,"outcome":"info","replica":"db2"}` + "\n\n")
	f.Add(`{"f":"read"}`)
	f.Fuzz(func(t *testing.T, in string) {
		ops, err := ReadJSONL(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, o := range ops {
			if err := o.Validate(); err != nil {
				t.Fatalf("accepted an invalid operation %+v: %v", o, err)
			}
		}
		var b bytes.Buffer
		if err := WriteJSONL(&b, ops); err != nil {
			t.Fatal(err)
		}
		again, err := ReadJSONL(&b)
		if err != nil || !reflect.DeepEqual(again, ops) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, ops, again)
		}
		if err := WriteEDN(&b, ops); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWriteFormat(t *testing.T) {
	var b bytes.Buffer
	if err := Export(&b, sample(), "edn"); err != nil || !strings.HasPrefix(b.String(), "{:index 0") {
		t.Errorf("edn: %v %q", err, b.String())
	}
	if err := Export(&b, sample(), "xml"); err == nil || err.Error() != `cannot write a history as "xml"; choose jsonl or edn` {
		t.Errorf("xml: %v", err)
	}
}

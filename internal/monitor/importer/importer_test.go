package importer

import (
	"errors"
	"strings"
	"testing"
)

var testFiles = map[string]Format{
	"iostat.json":        FormatIostat,
	"iostat-iso.json":    FormatIostat,
	"iostat-notime.json": FormatIostat,
	"sar.csv":            FormatSar,
	"sar-localtime.csv":  FormatSar,
	"cloudwatch.json":    FormatCloudWatch,
	"node_exporter.prom": FormatPrometheus,
}

func TestDetect(t *testing.T) {
	for file, want := range testFiles {
		if got, ok := Detect(readTestdata(t, file)); !ok || got != want {
			t.Errorf("Detect(%s) = %q, %v; want %q", file, got, ok, want)
		}
	}
	for _, data := range []string{"", "  \n", "hello world", "[1,2]", `{"a": 1}`, "# just a comment", "a,b,c"} {
		if f, ok := Detect([]byte(data)); ok {
			t.Errorf("Detect(%q) = %q, want no guess", data, f)
		}
	}
}

func TestFormats(t *testing.T) {
	if got := Formats(); len(got) != 4 || got[0] != FormatIostat || got[3] != FormatPrometheus {
		t.Fatalf("Formats() = %v", got)
	}
	_, err := Parse("nmon", "x", nil, Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown import format "nmon"`) {
		t.Fatalf("err = %v", err)
	}
}

// Every real file parsed as any other format fails with one sentence that
// names the file, the expected format and a line or JSON path.
func TestWrongFormat(t *testing.T) {
	for file, actual := range testFiles {
		data := readTestdata(t, file)
		for _, f := range Formats() {
			if f == actual {
				continue
			}
			_, err := Parse(f, file, data, Options{})
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("Parse(%s, %s) err = %v, want *Error", f, file, err)
				continue
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, file+":1: expected ") || !strings.Contains(msg, ", got ") || strings.Contains(msg, "\n") || pe.Format != f {
				t.Errorf("Parse(%s, %s): %q", f, file, msg)
			}
		}
	}
}

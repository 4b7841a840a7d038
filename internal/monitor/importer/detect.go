package importer

import (
	"bytes"
	"strings"
)

// Detect guesses the format of data from its beginning. It is a sniff,
// not a validation: Parse may still reject the data.
//
//   - JSON with a "sysstat" key: iostat; with "MetricDataResults":
//     CloudWatch.
//   - A first non-empty line "# hostname;interval;timestamp;...": sar.
//   - A scrape-time marker, "# HELP"/"# TYPE" comments, or a first line
//     shaped like `name{labels} value`: Prometheus.
func Detect(data []byte) (Format, bool) {
	head := data
	if len(head) > 64<<10 {
		head = head[:64<<10]
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(trimmed) == 0 {
		return "", false
	}
	if trimmed[0] == '{' {
		switch {
		case bytes.Contains(head, []byte(`"sysstat"`)):
			return FormatIostat, true
		case bytes.Contains(head, []byte(`"MetricDataResults"`)):
			return FormatCloudWatch, true
		}
		return "", false
	}
	line := firstLine(trimmed)
	if c, ok := strings.CutPrefix(line, "#"); ok {
		c = strings.TrimSpace(c)
		if strings.HasPrefix(c, "hostname;interval;timestamp;") {
			return FormatSar, true
		}
		if strings.HasPrefix(line, ScrapeMarker) || strings.HasPrefix(c, "HELP ") || strings.HasPrefix(c, "TYPE ") {
			return FormatPrometheus, true
		}
		return "", false
	}
	if _, _, _, _, _, err := parsePromLine(line); err == nil {
		return FormatPrometheus, true
	}
	return "", false
}

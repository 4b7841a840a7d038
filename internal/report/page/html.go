package page

import (
	"html/template"
	"io"

	"github.com/headroom-dev/headroom/internal/report/chart"
)

// The page is one file a browser opens offline: CSS inline, charts inline
// SVG, no script. The Content-Security-Policy forbids loading anything, so
// a report that tried would show it as an error rather than leak a request.
const pageTemplate = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="generator" content="Headroom {{.Generator}}">
<title>{{.Title}}</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",sans-serif;color:#1d1d1f;margin:0;background:#fafafa}
header,main,footer,nav{max-width:1240px;margin:0 auto;padding:0 20px}
header{padding-top:24px}
h1{font-size:1.6em;margin:0 0 4px}
h2{font-size:1.3em;margin:0 0 6px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub,.src,footer{color:#555;font-size:.9em}
nav ol{margin:8px 0 0;padding-left:20px;columns:2}
section{background:#fff;border:1px solid #e2e2e2;border-radius:6px;padding:16px 20px;margin:18px 0;min-width:0;overflow-wrap:break-word}
.summary{font-size:1.05em;margin:4px 0 14px}
figure{margin:14px 0 18px}
figcaption{margin-bottom:6px}
figcaption strong{display:block}
svg{width:100%;height:auto;max-width:940px;display:block}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.85em;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid #e5e5e5;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}
td{max-width:30em;overflow-wrap:anywhere}
td.num{text-align:right;white-space:nowrap}
td.fail{background:#fde2dc;font-weight:600}
td.warn{background:#fff1c9}
td.pass{color:#08663e}
.note{border-left:4px solid #56B4E9;background:#eef7fc;padding:6px 10px;margin:10px 0}
.note.warning{border-color:#D55E00;background:#fdf0e8}
pre{background:#f5f5f5;padding:10px;overflow-x:auto;font-size:.85em}
details{margin:10px 0}
ul.answers{list-style:none;margin:0;padding:0}
ul.answers li{border-left:4px solid #56B4E9;background:#f4f9fc;padding:6px 10px;margin:6px 0}
ul.answers li.alert{border-color:#c0392b;background:#fdecea;color:#7b1c12}
ul.answers .topic{font-weight:600;margin-right:.4em}
ul.answers a{margin-left:.4em;white-space:nowrap}
footer{padding-bottom:30px}
@media print{body{background:#fff}section{border:0;page-break-inside:avoid}}
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="sub">campaign {{.Facts.Campaign}} · seed {{.Facts.Seed}} · measured with Headroom {{.Facts.ToolVersion}} · started {{.Facts.Created.Format "2006-01-02 15:04:05 MST"}} · {{.Facts.Completed}} of {{.Facts.Runs}} runs completed</p>
</header>
<nav aria-label="sections"><ol>{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>{{end}}</ol></nav>
<main>
{{- range .Sections}}
<section id="{{.ID}}" aria-labelledby="{{.ID}}-h">
<h2 id="{{.ID}}-h">{{.Title}}</h2>
<p class="summary">{{.Summary}}</p>
{{- range .Blocks}}
{{- if .Table}}{{with .Table}}
<figure class="table" id="{{.ID}}">
<figcaption><strong>{{.Title}}</strong><span class="src">{{.Source}}</span></figcaption>
<div class="scroll"><table>
<thead><tr>{{range .Columns}}<th scope="col">{{.Title}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{cellClass .}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
</figure>{{end}}
{{- else if .Chart}}
<figure class="chart" id="{{.Chart.ID}}">
<figcaption><strong>{{.Chart.Title}}</strong><span class="src">{{.Chart.Source}}</span></figcaption>
{{svg .Chart}}
</figure>
{{- else if .Note}}
<p class="note {{.Note.Level}}">{{.Note.Text}}</p>
{{- else if .Code}}
<details><summary>{{.Code.Title}}</summary><pre>{{.Code.Text}}</pre></details>
{{- else if .Answers}}
<ul class="answers">
{{- range .Answers.Items}}
<li{{if .Alert}} class="alert"{{end}}><span class="topic">{{.Topic}}{{if .Treatment}} · {{.Treatment}}{{end}}:</span>{{.Text}}.{{if .Href}} <a href="{{.Href}}">evidence</a>{{end}}</li>
{{- end}}
</ul>
{{- end}}
{{- end}}
</section>
{{- end}}
</main>
<footer>Written by Headroom {{.Generator}} from the results database only. report.json beside this file holds the same numbers.</footer>
</body>
</html>
`

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	// Chart.SVG escapes every text it writes, so its output is safe HTML.
	"svg": func(c *chart.Chart) (template.HTML, error) {
		s, err := c.SVG()
		return template.HTML(s), err
	},
	"cellClass": func(c Cell) template.HTMLAttr {
		class := ""
		if c.Value != nil {
			class = "num"
		}
		switch c.Mark {
		case "fail", "warn", "pass":
			if class != "" {
				class += " "
			}
			class += c.Mark
		}
		if class == "" {
			return ""
		}
		return template.HTMLAttr(` class="` + class + `"`)
	},
}).Parse(pageTemplate))

// WriteHTML writes r as one self-contained HTML page.
func WriteHTML(w io.Writer, r *Report) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return pageTmpl.Execute(w, r)
}

// The Headroom explorer page: it asks the explorer's JSON endpoints
// (/api/...) and draws what they answer. The wildcard queries are
// answered by the server (internal/analysis/wildcard); this script only
// lays out controls, tables and plots (inline SVG).
'use strict';

const WILD = '*';
const SVGNS = 'http://www.w3.org/2000/svg';
const CARD_LINES = 6; // answers shown before the rest fold away
const COLORS = ['#1f5fa8', '#d0661b', '#2e8540', '#8e3ea8', '#b3261e', '#0f8a8a', '#7a6a12', '#555f6b'];

const state = {
  meta: null,
  x: 'level', y: 'throughput', series: '', objective: '',
  fixed: {},          // dimension -> value; absent = wildcard
  run: '',            // "STORE:ID" of the run whose timeline shows, or 
  view: null,
  compare: null,      // configuration keys ticked in the comparison; null = the plan's
  renders: 0,
};

// ---- small helpers ----

async function getJSON(url) {
  const res = await fetch(url);
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const k of kids.flat()) if (k != null) e.append(k);
  return e;
}

function sv(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  setAttrs(e, attrs);
  for (const k of kids.flat()) if (k != null) e.append(k);
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
}

function fmt(x) {
  if (x == null || !isFinite(x)) return '–';
  const a = Math.abs(x);
  if (a !== 0 && a < 0.01) return x.toExponential(2);
  if (a >= 1000) return Math.round(x).toLocaleString('en-US');
  return String(Number(x.toPrecision(a < 1 ? 2 : 4)));
}

function fmtValue(v) {
  if (!v || v.mean == null) return '–';
  return v.half != null && v.half > 0 ? fmt(v.mean) + ' ± ' + fmt(v.half) : fmt(v.mean);
}

function metricInfo(name) { return state.meta.metrics.find(m => m.name === name); }
function metricLabel(name) { const m = metricInfo(name); return m ? m.label : name; }
function dimLabel(name) { return name === 'level' ? 'load (' + state.meta.level_unit + ')' : name; }
function isMetric(name) { return !!metricInfo(name); }

function params(p) {
  return Object.keys(p.params || {}).sort().map(k => k + '=' + p.params[k]).join(', ') || '(no parameters)';
}

function configKey(p) { return p.store + '\u0000' + p.treatment; }
function configName(p) {
  const stores = state.meta.stores.length > 1 ? state.meta.stores[p.store].name + ': ' : '';
  return stores + (p.treatment || '(the campaign)');
}

// ---- the page state in the address (shareable, survives a reload) ----

function readHash() {
  const q = new URLSearchParams(location.hash.slice(1));
  for (const k of ['x', 'y', 'series', 'objective', 'run']) if (q.has(k)) state[k] = q.get(k);
  for (const [k, v] of q) if (k.startsWith('fix.') && v !== WILD) state.fixed[k.slice(4)] = v;
}

function queryString() {
  const q = new URLSearchParams({ x: state.x, y: state.y, series: state.series, objective: state.objective });
  for (const [k, v] of Object.entries(state.fixed)) q.set('fix.' + k, v);
  if (state.run) q.set('run', state.run);
  return q.toString();
}

// ---- controls ----

function select(id, label, options, value, onchange) {
  const s = el('select', { id, name: id, onchange: e => onchange(e.target.value) },
    options.map(([v, t]) => el('option', { value: v, selected: v === value, text: t })));
  return el('label', { for: id }, label, s);
}

function buildControls() {
  const m = state.meta;
  const dims = m.dimensions.map(d => [d.name, dimLabel(d.name)]);
  const metrics = m.metrics.map(x => [x.name, x.label]);
  const axes = document.getElementById('axes');
  axes.replaceChildren(axes.querySelector('legend'),
    select('x', 'x axis', [...dims, ...metrics], state.x, v => { state.x = v; if (state.series === v) state.series = ''; unfix(v); update(); }),
    select('y', 'y axis', metrics, state.y, v => { state.y = v; update(); }),
    select('series', 'one series per', [['', 'none'], ...dims], state.series, v => { state.series = v; unfix(v); update(); }),
    select('objective', 'best of the wildcards by', metrics, state.objective, v => { state.objective = v; update(); }));
  const ps = document.getElementById('params');
  ps.replaceChildren(ps.querySelector('legend'), ...m.dimensions.map(d => {
    const opts = [[WILD, '* (any)'], ...d.values.map(v => [v, v])];
    return select('fix-' + d.name, dimLabel(d.name), opts, state.fixed[d.name] || WILD, v => {
      if (v === WILD) delete state.fixed[d.name]; else state.fixed[d.name] = v;
      update();
    });
  }));
}

// unfix makes a dimension that is now plotted a wildcard again: a plotted
// dimension keeps every value.
function unfix(name) { delete state.fixed[name]; }

// syncControls shows the state in the selects; a plotted dimension's
// parameter select is disabled (it is plotted, so it keeps every value).
function syncControls() {
  for (const id of ['x', 'y', 'series', 'objective']) document.getElementById(id).value = state[id];
  const plotted = new Set([state.series, isMetric(state.x) ? '' : state.x]);
  for (const d of state.meta.dimensions) {
    const s = document.getElementById('fix-' + d.name);
    s.value = state.fixed[d.name] || WILD;
    s.disabled = plotted.has(d.name);
    s.title = s.disabled ? 'plotted: every value is shown' : '';
  }
}

// ---- the query: plot and plan ----

async function update() {
  syncControls();
  history.replaceState(null, '', '#' + queryString());
  const err = document.getElementById('query-error');
  let v;
  try {
    v = await getJSON('/api/query?' + queryString());
  } catch (e) {
    err.hidden = false;
    err.textContent = e.message;
    return;
  }
  err.hidden = true;
  state.view = v;
  const note = document.getElementById('query-note');
  const fixed = Object.entries(v.fixed).map(([k, x]) => k + '=' + x);
  note.textContent = (fixed.length ? 'Fixed: ' + fixed.join(', ') + '. ' : 'Nothing fixed. ') +
    (v.free.length ? 'Each point is the best of ' + v.free.join(', ') + ' by ' + metricLabel(v.objective) + '.'
      : 'Every point is one measured configuration.');
  drawQueryPlot(v);
  drawPlan(v);
  drawCompare();
  state.renders++;
  document.body.dataset.renders = state.renders;
}

function drawQueryPlot(v) {
  const series = v.series.map((s, i) => ({
    name: v.series_by ? s.name : metricLabel(v.y.name),
    color: COLORS[i % COLORS.length],
    points: s.points.map(p => ({
      x: p.x.mean, xText: p.x_text, y: p.y.mean, yHalf: p.y.half, xHalf: v.x.metric ? p.x.half : null,
      title: configName({ store: p.cell.store, treatment: p.cell.best.treatment }) + ' — ' + params(p.cell.best) +
        ' at ' + fmt(p.cell.best.level) + ' ' + state.meta.level_unit + ': ' + v.y.label + ' ' + fmtValue(p.y) +
        (p.cell.candidates > 1 ? ' (best of ' + p.cell.candidates + ')' : ''),
      onclick: () => drill(p.cell),
    })),
  }));
  const cats = v.x.numeric ? null : dimValues(v.x.name);
  plot(document.getElementById('plot'), {
    id: 'query', xLabel: v.x.label, yLabel: v.y.label, series, cats, lines: !v.x.metric || v.series_by !== '',
    title: v.y.label + ' against ' + v.x.label,
  });
}

function dimValues(name) {
  const d = state.meta.dimensions.find(x => x.name === name);
  return d ? d.values : [];
}

function drawPlan(v) {
  const obj = v.objective;
  const t = document.getElementById('plan');
  const cols = ['throughput', 'p99_ms', 'cost_per_hour', 'profit_per_hour'];
  if (!cols.includes(obj)) cols.unshift(obj);
  t.replaceChildren(
    el('thead', null, el('tr', null, el('th', { text: dimLabel('level') }), el('th', { class: 'text', text: 'configuration' }),
      cols.map(c => el('th', { text: metricLabel(c) + (c === obj ? ' ★' : '') })), el('th', { text: 'runs' }))),
    el('tbody', null, v.plan.map(c => el('tr', { class: 'clickable', onclick: () => drill(c), title: 'show the runs' },
      el('td', { text: fmt(c.best.level) }),
      el('td', { class: 'text' }, configName({ store: c.store, treatment: c.best.treatment }), el('br'),
        el('span', { class: 'tie', text: params(c.best) + (c.tie ? ' · a tie, decided by ' + tieRule(v) : '') +
          (c.candidates > 1 ? ' · best of ' + c.candidates : '') })),
      cols.map(m => el('td', { class: m === obj ? 'best' : null, text: fmtValue(c.best.metrics[m]) })),
      el('td', { text: String((c.best.runs || []).length) })))));
  document.getElementById('plan-h').textContent = 'Plan: the configuration with the best ' + metricLabel(obj) +
    ' at each load' + (v.plan_free.length ? ', over ' + v.plan_free.join(', ') : '');
}

function tieRule(v) { return v.tie_break.replace(/^equal objective values: /, ''); }

// ---- configurations side by side ----

function configurations() {
  const seen = new Map();
  for (const p of state.meta.points) if (!seen.has(configKey(p))) seen.set(configKey(p), p);
  return [...seen.values()];
}

function drawCompare() {
  const v = state.view;
  const configs = configurations();
  if (state.compare === null) {
    state.compare = [...new Set(v.plan.map(c => configKey({ store: c.store, treatment: c.best.treatment })))].slice(0, 4);
    if (state.compare.length < 2) state.compare = configs.slice(0, 2).map(configKey);
  }
  const pick = document.getElementById('compare-pick');
  pick.replaceChildren(el('div', { class: 'pick' }, configs.map(p => {
    const key = configKey(p);
    const id = 'cmp-' + configs.indexOf(p);
    return el('label', { for: id, title: params(p) },
      el('input', { type: 'checkbox', id, checked: state.compare.includes(key), onchange: e => {
        state.compare = e.target.checked ? [...state.compare, key] : state.compare.filter(k => k !== key);
        drawCompare();
      } }), configName(p));
  })));
  const chosen = configs.filter(p => state.compare.includes(configKey(p)));
  const levels = [...new Set(state.meta.points.map(p => p.level))].sort((a, b) => a - b);
  const y = v.y.name;
  const higher = metricInfo(y).higher_is_better;
  const at = (p, l) => state.meta.points.find(q => configKey(q) === configKey(p) && q.level === l);
  document.getElementById('compare-table').replaceChildren(
    el('thead', null, el('tr', null, el('th', { text: dimLabel('level') }),
      chosen.map(p => el('th', { class: 'text', title: params(p) }, configName(p), el('br'), el('span', { class: 'tie', text: params(p) }))))),
    el('tbody', null, levels.map(l => {
      const vals = chosen.map(p => { const q = at(p, l); return q ? q.metrics[y] : null; });
      const known = vals.filter(x => x && x.mean != null).map(x => x.mean);
      const best = known.length ? (higher ? Math.max(...known) : Math.min(...known)) : null;
      return el('tr', null, el('td', { text: fmt(l) }),
        vals.map(x => el('td', { class: x && x.mean === best && chosen.length > 1 ? 'best' : null, text: fmtValue(x) })));
    })));
  document.getElementById('compare-h').textContent = 'Configurations side by side: ' + metricLabel(y);
}

// ---- drill down: a point's runs, a run's timeline ----

async function drill(cell) {
  state.run = '';
  history.replaceState(null, '', '#' + queryString());
  const runs = cell.best.runs || [];
  const hint = document.getElementById('drill-hint');
  hint.textContent = configName({ store: cell.store, treatment: cell.best.treatment }) + ' (' + params(cell.best) + ') at ' +
    fmt(cell.best.level) + ' ' + state.meta.level_unit + ': the runs its figures come from, and any others of the same configuration and load. Click a run for its timeline.';
  const t = document.getElementById('runs');
  let rs;
  try {
    rs = await getJSON('/api/runs?store=' + cell.store + '&runs=' + runs.join(','));
  } catch (e) {
    t.replaceChildren(el('caption', { class: 'attention', text: e.message }));
    return;
  }
  t.replaceChildren(
    el('thead', null, el('tr', null, ['run', 'repetition', 'status', 'counted', 'throughput (req/s)', 'sent', 'errors', 'late', 'dropped', 'client limited']
      .map(h => el('th', { text: h })))),
    el('tbody', null, rs.map(r => el('tr', { class: 'clickable', 'data-run': r.id, onclick: ev => {
      for (const x of t.querySelectorAll('tr.chosen')) x.classList.remove('chosen');
      ev.currentTarget.classList.add('chosen');
      timeline(cell.store, r.id);
    } },
      el('td', { text: String(r.id) }), el('td', { text: String(r.repetition) }),
      el('td', { class: r.status === 'completed' ? null : 'attention', text: r.status + (r.message ? ': ' + r.message : '') }),
      el('td', { text: r.counted ? 'yes' : 'no' }), el('td', { text: fmt(r.throughput) }), el('td', { text: String(r.sent) }),
      el('td', { class: r.errors ? 'attention' : null, text: String(r.errors) }), el('td', { text: String(r.late) }),
      el('td', { text: String(r.dropped) }), el('td', { class: r.client_limited ? 'attention' : null, text: r.client_limited ? 'yes' : 'no' })))));
  document.getElementById('timeline').replaceChildren();
  document.getElementById('drill').scrollIntoView({ block: 'start' });
}

async function timeline(store, id) {
  state.run = store + ':' + id;
  history.replaceState(null, '', '#' + queryString());
  const box = document.getElementById('timeline');
  let d;
  try {
    d = await getJSON('/api/run?store=' + store + '&id=' + id);
  } catch (e) {
    box.replaceChildren(el('p', { class: 'attention', text: e.message }));
    return;
  }
  const phases = [...new Set(d.timeline.map(p => p.phase))];
  const byPhase = (f) => phases.map((ph, i) => ({
    name: ph, color: COLORS[i % COLORS.length],
    points: d.timeline.filter(p => p.phase === ph && f(p) != null).map(p => ({
      x: p.t, y: f(p), title: ph + ' at ' + fmt(p.t) + ' s: ' + fmt(f(p)) + (p.slo_miss ? ' (missed the SLO)' : ''), miss: p.slo_miss })),
  }));
  const marks = d.events.filter(e => e.kind !== 'phase').map(e => ({ x: e.t, label: e.kind + ': ' + e.detail }));
  const tp = el('figure', { id: 'run-throughput', class: 'plot' }), p99 = el('figure', { id: 'run-p99', class: 'plot' });
  const sections = el('ul', { id: 'run-sections', class: 'muted' }, el('li', { text: 'Reading the report’s sections…' }));
  box.replaceChildren(
    el('h3', { text: 'Run ' + d.run.id + ': ' + (d.run.treatment || 'the campaign') + ' at ' + fmt(d.run.level) + ' ' + state.meta.level_unit +
      ', repetition ' + d.run.repetition }),
    el('p', { class: 'note', text: 'Each point is one ' + fmt(d.interval) + ' s interval: the requests that completed in it, every operation type together, ' +
      'one line per phase the requests were meant to start in (under overload, warmup requests still complete during the measured phase)' +
      (d.slo ? '; SLO ' + d.slo + ' (a hollow point missed it)' : '') + (d.skipped ? '; ' + d.skipped + ' partial interval(s) left out' : '') +
      '. Dashed lines are the run’s events.' }),
    d.timeline.length ? el('div', { class: 'timelines' }, tp, p99) : el('p', { class: 'attention', text: 'This run recorded no intervals.' }),
    el('p', null, el('a', { href: d.report, target: '_blank', rel: 'noopener', text: 'The store’s report' }), ', and its sections:'),
    sections);
  plot(tp, { id: 'tl-tp', xLabel: 'seconds since the run started', yLabel: 'throughput (req/s)', series: byPhase(p => p.throughput), lines: true, marks, small: true,
    title: 'throughput of run ' + d.run.id });
  plot(p99, { id: 'tl-p99', xLabel: 'seconds since the run started', yLabel: 'p99 response time (ms)', series: byPhase(p => p.p99_ms), lines: true, marks, small: true,
    title: 'p99 of run ' + d.run.id });
  // The report of a real campaign can take a while to build the first
  // time; the timeline does not wait for its section list.
  getJSON('/api/sections?store=' + store).then(
    secs => sections.replaceChildren(...secs.map(s => el('li', null, el('a', { href: d.report + '#' + s.id, target: '_blank', rel: 'noopener', text: s.title })))),
    e => sections.replaceChildren(el('li', { class: 'attention', text: e.message })));
}

// ---- the plot: inline SVG ----

// niceTicks returns about n round values covering [lo, hi].
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) { const d = Math.abs(lo) || 1; lo -= d / 2; hi += d / 2; }
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(f => f * mag).find(s => s >= raw);
  const out = [];
  for (let t = Math.floor(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  if (out[0] > lo) out.unshift(out[0] - step);
  if (out[out.length - 1] < hi) out.push(out[out.length - 1] + step);
  return out;
}

// plot draws series of points into fig: a numeric x axis, or categories
// (spec.cats) spaced evenly; a y axis from 0 (or the lowest value when it
// is negative); error bars where a point has a half-width; spec.marks are
// vertical dashed lines (events).
function plot(fig, spec) {
  const W = Math.max(320, Math.round(fig.clientWidth || 640)), H = spec.small ? 230 : 380;
  const m = { l: 66, r: 16, t: 12, b: 46 };
  const pts = spec.series.flatMap(s => s.points.filter(p => p.y != null && isFinite(p.y)));
  const xs = spec.cats ? null : pts.map(p => p.x).filter(isFinite).concat((spec.marks || []).map(k => k.x));
  const ys = pts.flatMap(p => (p.yHalf > 0 ? [p.y - p.yHalf, p.y + p.yHalf] : [p.y]));
  const ylo = Math.min(0, ...ys), yhi = Math.max(...ys, ylo + 1e-9);
  const yt = niceTicks(ylo, yhi, spec.small ? 4 : 6);
  let xt, xpos;
  const pw = W - m.l - m.r, ph = H - m.t - m.b;
  if (spec.cats) {
    xt = spec.cats;
    xpos = v => m.l + (spec.cats.indexOf(v) + 0.5) * pw / spec.cats.length;
  } else {
    const xlo = xs.length ? Math.min(...xs) : 0, xhi = xs.length ? Math.max(...xs) : 1;
    xt = niceTicks(spec.small ? Math.min(0, xlo) : xlo, xhi, spec.small ? 5 : 7);
    xpos = v => m.l + (v - xt[0]) / (xt[xt.length - 1] - xt[0]) * pw;
  }
  const ypos = v => m.t + ph - (v - yt[0]) / (yt[yt.length - 1] - yt[0]) * ph;
  const g = [];
  for (const t of yt) {
    g.push(sv('line', { class: 'grid', x1: m.l, x2: W - m.r, y1: ypos(t), y2: ypos(t) }));
    g.push(sv('text', { x: m.l - 6, y: ypos(t) + 4, 'text-anchor': 'end', text: fmt(t) }));
  }
  for (const t of xt) {
    const x = spec.cats ? xpos(t) : xpos(t);
    g.push(sv('line', { class: 'grid', x1: x, x2: x, y1: m.t, y2: m.t + ph }));
    g.push(sv('text', { x, y: m.t + ph + 16, 'text-anchor': 'middle', text: spec.cats ? t : fmt(t) }));
  }
  g.push(sv('path', { class: 'axis', d: `M${m.l},${m.t}V${m.t + ph}H${W - m.r}`, fill: 'none', stroke: '#8a939c' }));
  g.push(sv('text', { class: 'xlabel', x: m.l + pw / 2, y: H - 8, 'text-anchor': 'middle', text: spec.xLabel }));
  g.push(sv('text', { class: 'ylabel', x: -(m.t + ph / 2), y: 16, transform: 'rotate(-90)', 'text-anchor': 'middle', text: spec.yLabel }));
  for (const k of spec.marks || []) {
    if (!isFinite(k.x)) continue;
    g.push(sv('line', { class: 'mark', x1: xpos(k.x), x2: xpos(k.x), y1: m.t, y2: m.t + ph }, sv('title', { text: k.label })));
  }
  const px = p => (spec.cats ? xpos(p.xText) : xpos(p.x));
  for (const s of spec.series) {
    const ok = s.points.filter(p => p.y != null && isFinite(p.y) && (spec.cats || isFinite(p.x)));
    if (spec.lines && ok.length > 1) {
      g.push(sv('path', { class: 'line', 'data-series': s.name, fill: 'none', stroke: s.color, 'stroke-width': 2,
        d: ok.map((p, i) => (i ? 'L' : 'M') + px(p).toFixed(1) + ',' + ypos(p.y).toFixed(1)).join('') }));
    }
    for (const p of ok) {
      if (p.yHalf > 0) {
        g.push(sv('path', { class: 'err', stroke: s.color, d: `M${px(p)},${ypos(p.y - p.yHalf)}V${ypos(p.y + p.yHalf)}` }));
      }
      if (p.xHalf > 0 && !spec.cats) {
        g.push(sv('path', { class: 'err', stroke: s.color, d: `M${xpos(p.x - p.xHalf)},${ypos(p.y)}H${xpos(p.x + p.xHalf)}` }));
      }
      g.push(sv('circle', { class: 'pt', 'data-series': s.name, cx: px(p), cy: ypos(p.y), r: spec.small ? 3 : 5,
        fill: p.miss ? '#fff' : s.color, stroke: s.color, 'stroke-width': 1.5, onclick: p.onclick }, sv('title', { text: p.title })));
    }
  }
  const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': spec.title, id: spec.id }, sv('title', { text: spec.title }), g);
  const legend = el('ul', { class: 'legend' }, spec.series.map(s => el('li', null, el('i', { style: 'background:' + s.color }), s.name)));
  fig.replaceChildren(svg, spec.series.length > 1 || !spec.small ? legend : '');
}

// ---- the home: each store's answer card, then the plan ----

async function drawHome() {
  const box = document.getElementById('cards');
  let home;
  try {
    home = await getJSON('/api/answer');
  } catch (e) {
    box.replaceChildren(el('p', { class: 'attention', text: e.message }));
    return;
  }
  box.replaceChildren(...home.cards.map(sc => {
    const link = l => (l.evidence ? [' ', el('a', { href: '/report/' + sc.store + '#' + l.evidence, target: '_blank', rel: 'noopener', text: 'evidence' })] : []);
    const line = (l, cls) => el('li', { class: cls }, el('strong', { text: l.topic + (l.treatment ? ' (' + l.treatment + ')' : '') + ': ' }), l.text, link(l));
    // Every finding in red shows; answers beyond the first few fold away.
    const answers = (sc.card.answers || []).map(l => line(l, null));
    const items = [...(sc.card.attention || []).map(l => line(l, 'attention')), ...answers.slice(0, CARD_LINES)];
    const more = answers.length > CARD_LINES ?
      el('details', null, el('summary', { text: (answers.length - CARD_LINES) + ' more answers' }), el('ul', null, answers.slice(CARD_LINES))) : null;
    return el('div', { class: 'card' }, el('h3', { text: sc.name }),
      sc.error ? el('p', { class: 'attention', text: sc.error }) : el('ul', null, items.length ? items : el('li', { class: 'muted', text: 'No answers: no completed runs.' })), more);
  }));
  drawHomePlan(home);
}

function drawHomePlan(home) {
  const box = document.getElementById('home-plan');
  if (!home.plan) {
    box.replaceChildren(el('h3', { text: 'Plan' }), el('p', { class: 'muted', text: 'No plan: ' + home.plan_error }));
    return;
  }
  const p = home.plan, obj = p.objective;
  const extra = [];
  for (const b of p.break_evens || []) {
    extra.push(el('li', { text: b.from + ' → ' + b.to + ': break-even ' + (b.measured && b.at != null ? 'at ' + fmt(b.at) + ' ' + p.level_unit : 'not measured at both levels') +
      ' (between ' + fmt(b.low_level) + ' and ' + fmt(b.high_level) + ')' }));
  }
  for (const r of [p.price, p.main_step]) {
    if (!r) continue;
    extra.push(el('li', { text: 'the plan holds for a ' + r.parameter + ' from ' + (r.low == null ? 'any lower value' : fmt(r.low)) + ' to ' +
      (r.high == null ? 'any higher value' : fmt(r.high)) + ' (now ' + fmt(r.base) + ')' }));
  }
  box.replaceChildren(el('h3', { id: 'home-plan-h', text: 'Plan over every configuration measured' }),
    el('p', { text: home.plan_summary }),
    el('div', { class: 'scroll' }, el('table', { id: 'home-plan-table', 'aria-labelledby': 'home-plan-h' },
      el('thead', null, el('tr', null, el('th', { text: dimLabel('level') }), el('th', { class: 'text', text: 'configuration' }), el('th', { text: 'nodes' }),
        el('th', { text: metricLabel(obj) }), el('th', { text: metricLabel('cost_per_hour') }), el('th', { class: 'text', text: 'runner-up' }), el('th', { class: 'text', text: 'note' }))),
      el('tbody', null, p.choices.map(c => el('tr', null, el('td', { text: fmt(c.level) }),
        el('td', { class: 'text' }, c.config, el('br'), el('span', { class: 'tie', text: params(c) })), el('td', { text: String(c.nodes) }),
        el('td', { class: 'best', text: fmtValue(c.objective) }), el('td', { text: fmtValue(c.cost_per_hour) }),
        el('td', { class: 'text', text: c.runner_up ? c.runner_up + (c.margin != null ? ' (' + fmt(c.margin) + ' behind)' : '') : '–' }),
        el('td', { class: 'text' + (c.close ? ' attention' : ''), text: [c.tie, c.close ? 'the runner-up is inside the 95% interval' : ''].filter(Boolean).join('; ') })))))),
    extra.length ? el('ul', { class: 'note' }, extra) : '');
}

// ---- start ----

async function start() {
  try {
    state.meta = await getJSON('/api/meta');
  } catch (e) {
    document.getElementById('stores').textContent = e.message;
    return;
  }
  const m = state.meta;
  state.objective = m.objective;
  readHash();
  document.getElementById('stores').textContent = m.stores.map(s => s.name + ' (' + s.campaign + ', ' + s.completed + ' of ' + s.runs + ' runs completed)').join(' · ');
  document.getElementById('money').replaceChildren(...[...m.money, ...(m.notes || [])].map(t => el('li', { text: t })));
  buildControls();
  await update();
  await drawHome();
  // An address with run=STORE:ID opens on that run's timeline.
  const [store, id] = state.run.split(':');
  if (id) {
    document.getElementById('drill-hint').textContent = 'Run ' + id + ' of ' + (m.stores[store] || { name: 'store ' + store }).name + '.';
    await timeline(store, id);
    document.getElementById('drill').scrollIntoView({ block: 'start' });
  }
  document.body.dataset.ready = 'yes';
}

start();

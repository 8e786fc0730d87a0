// Studio's usage page: runs, errors, latency, tokens and cost over time, drawn as SVG charts
// from GET /traces/summary (one bucket per agent and hour or day), with each chart's numbers
// in a table beside it for screen readers and copying.
import { call } from './api.js';
import { h, render } from './ui.js';
import { go } from './nav.js';
import { agentNames } from './executions.js';

const SVG = 'http://www.w3.org/2000/svg';
const windows = { '24h': 'hour', '7d': 'day', '30d': 'day' };

function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...kids);
  return el;
}

/** Folds the per-agent buckets into one row per bucket start (all agents, or one). */
export function rows(buckets, agent) {
  const by = new Map();
  for (const b of buckets) {
    if (agent && b.agent_id !== agent) continue;
    const r = by.get(b.bucket_start) || { start: b.bucket_start, runs: 0, errors: 0, tokens: 0, cost: 0, p50: 0, p95: 0, p99: 0, timed: 0 };
    r.runs += b.runs;
    r.errors += b.errors;
    r.tokens += b.token_usage.total_tokens;
    r.cost += b.cost;
    if (b.latency_ms.p50 != null) {
      // Across agents the percentiles are weighted by runs: exact for one agent.
      r.p50 += b.latency_ms.p50 * b.runs;
      r.p95 += b.latency_ms.p95 * b.runs;
      r.p99 += b.latency_ms.p99 * b.runs;
      r.timed += b.runs;
    }
    by.set(b.bucket_start, r);
  }
  return [...by.values()].sort((a, b) => a.start.localeCompare(b.start)).map((r) => ({
    ...r,
    p50: r.timed ? r.p50 / r.timed : null,
    p95: r.timed ? r.p95 / r.timed : null,
    p99: r.timed ? r.p99 / r.timed : null,
  }));
}

const label = (start, bucket) => {
  const d = new Date(start);
  return bucket === 'hour' ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString([], { month: 'short', day: 'numeric' });
};

/**
 * A chart of series over the rows: bars for the first series when bars is set, lines for the
 * others. Each series is [name, key, colour class].
 */
function chart(id, title, data, bucket, series, fmt, bars) {
  const W = 640, H = 180, left = 56, bottom = 22, top = 8;
  const vals = data.flatMap((r) => series.map(([, k]) => r[k] ?? 0));
  const max = Math.max(1e-9, ...vals);
  const x = (i) => left + 12 + (data.length <= 1 ? (W - left - 24) / 2 : (i * (W - left - 24)) / (data.length - 1));
  const y = (v) => top + (H - top - bottom) * (1 - v / max);
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title} chart`, class: 'chart' });
  g.append(svg('line', { x1: left, y1: H - bottom, x2: W, y2: H - bottom, class: 'axis' }));
  g.append(svg('text', { x: left - 6, y: top + 10, 'text-anchor': 'end', class: 'tick' }, fmt(max)));
  g.append(svg('text', { x: left - 6, y: H - bottom, 'text-anchor': 'end', class: 'tick' }, fmt(0)));
  const step = Math.max(1, Math.ceil(data.length / 8));
  data.forEach((r, i) => {
    if (i % step === 0) g.append(svg('text', { x: x(i), y: H - 6, 'text-anchor': 'middle', class: 'tick' }, label(r.start, bucket)));
  });
  series.forEach(([name, key, cls], si) => {
    if (bars && si === 0) {
      const bw = Math.max(2, Math.min(24, (W - left) / Math.max(1, data.length) - 4));
      data.forEach((r, i) => {
        const v = r[key] ?? 0;
        g.append(svg('rect', { x: x(i) - bw / 2, y: y(v), width: bw, height: Math.max(0, H - bottom - y(v)), class: `s ${cls}` },
          svg('title', {}, `${label(r.start, bucket)} ${name}: ${fmt(v)}`)));
      });
      return;
    }
    const pts = data.map((r, i) => (r[key] == null ? null : `${x(i)},${y(r[key])}`)).filter(Boolean);
    if (pts.length) g.append(svg('polyline', { points: pts.join(' '), class: `l ${cls}`, fill: 'none' }));
    data.forEach((r, i) => {
      if (r[key] != null) g.append(svg('circle', { cx: x(i), cy: y(r[key]), r: 2.5, class: `pt ${cls}` }, svg('title', {}, `${label(r.start, bucket)} ${name}: ${fmt(r[key])}`)));
    });
  });
  const legend = h('p', { class: 'legend' }, series.map(([name, , cls]) => h('span', { class: `key ${cls}` }, name)));
  const table = h('details', {}, h('summary', {}, `${title}: the numbers`),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Bucket'), series.map(([name]) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, data.map((r) => h('tr', {}, h('td', {}, new Date(r.start).toLocaleString()), series.map(([, k]) => h('td', {}, r[k] == null ? '—' : fmt(r[k]))))))));
  return h('section', { class: 'card', id }, h('h2', {}, title), g, legend, table);
}

const num = (v) => (v >= 1000 ? Math.round(v).toLocaleString() : String(Math.round(v * 100) / 100));
const ms = (v) => (v >= 1000 ? (v / 1000).toFixed(1) + ' s' : Math.round(v) + ' ms');
const usd = (v) => '$' + v.toFixed(v >= 1 ? 2 : v >= 0.01 ? 4 : 6);

export async function usagePage(q) {
  const win = windows[q.get('window')] ? q.get('window') : '24h';
  const agent = q.get('agent_id') || '';
  const [sum, names] = await Promise.all([call('GET', `/traces/summary?window=${win}&bucket=${windows[win]}`), agentNames()]);
  const data = rows(sum.buckets, agent);
  const winSel = h('select', { id: 'usage-window' }, Object.keys(windows).map((w) => h('option', { value: w, selected: w === win }, `Last ${w}`)));
  const agentSel = h('select', { id: 'usage-agent' }, h('option', { value: '' }, 'All agents'),
    [...names].map(([id, n]) => h('option', { value: id, selected: id === agent }, n)));
  const apply = () => go(`#/usage?window=${winSel.value}` + (agentSel.value ? `&agent_id=${encodeURIComponent(agentSel.value)}` : ''));
  winSel.addEventListener('change', apply);
  agentSel.addEventListener('change', apply);
  const total = data.reduce((t, r) => ({ runs: t.runs + r.runs, errors: t.errors + r.errors, tokens: t.tokens + r.tokens, cost: t.cost + r.cost }),
    { runs: 0, errors: 0, tokens: 0, cost: 0 });
  const breakdownSection = h('section', { id: 'usage-breakdown', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Reading usage…'));
  render('Usage',
    h('form', { class: 'row', onsubmit: (ev) => { ev.preventDefault(); apply(); } },
      h('div', {}, h('label', { for: 'usage-window' }, 'Window'), winSel),
      h('div', {}, h('label', { for: 'usage-agent' }, 'Agent'), agentSel)),
    h('dl', { class: 'kv', id: 'usage-totals' },
      h('dt', {}, 'Runs'), h('dd', {}, num(total.runs)),
      h('dt', {}, 'Errors'), h('dd', {}, `${num(total.errors)} (${total.runs ? ((100 * total.errors) / total.runs).toFixed(1) : '0'}%)`),
      h('dt', {}, 'Tokens'), h('dd', {}, num(total.tokens)),
      h('dt', {}, 'Cost'), h('dd', {}, usd(total.cost))),
    breakdownSection,
    data.length === 0
      ? h('p', { class: 'muted', id: 'usage-empty' }, `No runs in the last ${win}.`)
      : [
        chart('usage-runs', 'Runs and errors', data, windows[win], [['Runs', 'runs', 'c1'], ['Errors', 'errors', 'c3']], num, true),
        chart('usage-latency', 'Latency', data, windows[win], [['p50', 'p50', 'c1'], ['p95', 'p95', 'c2'], ['p99', 'p99', 'c3']], ms, false),
        agent ? null : h('p', { class: 'muted' }, 'Across agents the latency percentiles are weighted by runs; pick an agent for its exact ones.'),
        chart('usage-tokens', 'Tokens', data, windows[win], [['Tokens', 'tokens', 'c2']], num, true),
        chart('usage-cost', 'Cost', data, windows[win], [['Cost', 'cost', 'c1']], usd, true),
      ]);
  fillBreakdown(breakdownSection, win, agent).catch((e) => {
    if (e.name !== 'AbortError') breakdownSection.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Cost by model and end user: ${e.message}`));
  });
}

/** Groups listed per table: the costliest of the window (the API's maximum). */
const BREAKDOWN_LIMIT = 100;

/**
 * Cost and tokens by model and by end user over the window, from GET /traces/usage: rollups
 * kept as runs end, so every run of the window counts however long the history.
 */
async function fillBreakdown(box, win, agent) {
  const get = (by) => {
    const q = new URLSearchParams({ group_by: by, window: win, limit: BREAKDOWN_LIMIT });
    if (agent) q.set('agent_id', agent);
    return call('GET', `/traces/usage?${q}`);
  };
  const [byModel, byUser] = await Promise.all([get('model'), get('end_user')]);
  const note = (u, what) => (u.total > u.groups.length ? ` Only the ${num(u.groups.length)} costliest of ${num(u.total)} ${what} are listed.` : '');
  box.replaceChildren(
    h('h2', {}, 'Cost and tokens by model and by end user'),
    h('p', { class: 'muted', id: 'usage-breakdown-note' }, 'Every execution that ended in the window, counted in the hour it was created (ingested traces, counted above, are not executions). ' +
      'An execution\'s model is the one that answered its last model call (a fallback included).' + note(byModel, 'models') + note(byUser, 'end users')),
    h('div', { class: 'cols' },
      groupTable('usage-by-model', 'Model', byModel.groups, (k) => k || '(no model call)'),
      groupTable('usage-by-end-user', 'End user', byUser.groups, (k) => k)));
}

/** One row per group of the breakdown: runs, tokens and cost, the costliest first. */
function groupTable(id, what, groups, label) {
  return h('section', { class: 'card', 'aria-label': `By ${what.toLowerCase()}` }, h('h3', {}, `By ${what.toLowerCase()}`),
    groups.length ? h('table', { id }, h('thead', {}, h('tr', {}, [what, 'Runs', 'Errors', 'Prompt tokens', 'Completion tokens', 'Cost'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, groups.map((g) => h('tr', { 'data-key': label(g.key) }, h('td', {}, label(g.key)), h('td', { class: 'num' }, num(g.runs)),
        h('td', { class: 'num' }, num(g.errors)), h('td', { class: 'num' }, num(g.token_usage.prompt_tokens)),
        h('td', { class: 'num' }, num(g.token_usage.completion_tokens)), h('td', { class: 'num', 'data-cost': g.cost }, usd(g.cost))))))
      : h('p', { class: 'muted' }, 'No runs.'));
}

// Experiments: the list (and a form to compare two), one experiment's progress, summary and
// results table with its scores (looked at again every second while it runs), and a
// comparison of experiments side by side.
import { call } from './api.js';
import { badge, cost, field, h, pager, pick, render, when } from './ui.js';
import { go, pageAbort, route } from './nav.js';

const fmt = (v) => (v == null ? '—' : typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : String(v));
const text = (raw) => (raw == null ? '—' : typeof raw === 'object' && typeof raw.content === 'string' ? raw.content : JSON.stringify(raw));

export async function experimentsPage(params) {
  const page = Number(params.get('page') || 1);
  const res = await call('GET', `/experiments?page=${page}&limit=20`, undefined, { full: true });
  const ids = res.data.map((x) => x.id);
  const labels = res.data.map((x) => `${x.name} (${x.id.slice(0, 8)})`);
  const a = pick('cmp-a', ids, ids[1], labels);
  const b = pick('cmp-b', ids, ids[0], labels);
  render('Experiments',
    h('p', { class: 'muted' }, 'An agent version run on every item of a dataset, each run scored by evaluators. Start one with POST /api/v1/experiments or agentplane eval run.'),
    res.data.length
      ? h('table', { id: 'experiments' }, h('thead', {}, h('tr', {}, ['Experiment', 'Status', 'Progress', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, res.data.map((x) => h('tr', { 'data-experiment': x.id },
          h('td', {}, h('a', { href: `#/experiments/${x.id}` }, x.name)),
          h('td', {}, badge(x.status)),
          h('td', { class: 'num' }, `${x.progress.completed + x.progress.failed} / ${x.progress.total}`),
          h('td', {}, when(x.created_at))))))
      : h('p', { class: 'muted', id: 'experiments-empty' }, 'No experiment yet.'),
    pager(res.pagination, (p) => go(`#/experiments?page=${p}`)),
    ids.length > 1 ? h('form', { class: 'card', id: 'compare-form', onsubmit: (ev) => { ev.preventDefault(); go(`#/experiments/compare?ids=${a.value},${b.value}`); } },
      h('h2', {}, 'Compare two'), h('div', { class: 'row' }, field('Baseline', a), field('Against', b),
        h('button', { type: 'submit', id: 'compare' }, 'Compare'))) : null);
}

export async function experimentPage(id) {
  const signal = pageAbort.signal;
  const [x, rows] = await Promise.all([call('GET', `/experiments/${encodeURIComponent(id)}`), call('GET', `/experiments/${encodeURIComponent(id)}/results?limit=100`)]);
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.scores || {})))].sort();
  const p = x.progress;
  const sm = x.summary || { scores: [] };
  render(x.name,
    h('dl', { class: 'kv', id: 'experiment-meta' },
      h('dt', {}, 'Status'), h('dd', { id: 'experiment-status' }, badge(x.status)),
      h('dt', {}, 'Progress'), h('dd', {}, h('progress', { id: 'experiment-progress', max: p.total, value: p.completed + p.failed }),
        ` ${p.completed} completed, ${p.failed} failed of ${p.total}`),
      h('dt', {}, 'Agent'), h('dd', {}, h('a', { href: `#/agents/${x.agent_id}` }, x.agent_id), ` version ${x.version_id}`),
      h('dt', {}, 'Dataset'), h('dd', {}, `${x.dataset_id} (version ${x.dataset_version})`),
      h('dt', {}, 'Cost'), h('dd', {}, cost(sm.cost)),
      h('dt', {}, 'Latency'), h('dd', {}, `p50 ${fmt(sm.latency_p50_ms)} ms · p95 ${fmt(sm.latency_p95_ms)} ms`),
      x.error ? [h('dt', {}, 'Error'), h('dd', { class: 'error' }, x.error)] : null),
    h('h2', {}, 'Scores'),
    sm.scores.length ? h('table', { id: 'experiment-summary' }, h('thead', {}, h('tr', {}, ['Score', 'Count', 'Mean', 'Distribution'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, sm.scores.map((s) => h('tr', { 'data-score': s.name },
        h('td', {}, s.name), h('td', { class: 'num' }, s.count), h('td', { class: 'num mean' }, fmt(s.mean)),
        h('td', {}, Object.entries(s.distribution || {}).map(([l, n]) => `${l}: ${n}`).join(', ') || '—')))))
      : h('p', { class: 'muted' }, 'No scores yet.'),
    h('h2', {}, 'Results'),
    h('table', { id: 'experiment-results' }, h('thead', {}, h('tr', {}, ['#', 'Status', 'Input', 'Output', 'Expected', ...names, 'Duration', 'Cost'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows.map((r) => h('tr', { 'data-item': r.item_id },
        h('td', {}, r.execution_id ? h('a', { href: `#/executions/${r.execution_id}` }, r.position + 1) : r.position + 1),
        h('td', {}, badge(r.status)),
        h('td', {}, text(r.input?.message ?? r.input)),
        h('td', { class: 'output' }, text(r.output)),
        h('td', {}, text(r.expected_output)),
        ...names.map((n) => h('td', { class: 'num', 'data-name': n }, fmt(r.scores?.[n]))),
        h('td', { class: 'num' }, r.duration_ms != null ? `${r.duration_ms} ms` : '—'),
        h('td', { class: 'num' }, cost(r.cost)))))));
  if (x.status === 'pending' || x.status === 'running') {
    setTimeout(() => { if (!signal.aborted) route(); }, 1000);
  }
}

export async function experimentComparePage(params) {
  const ids = (params.get('ids') || '').split(',').filter(Boolean);
  const c = await call('GET', `/experiments/compare?ids=${ids.map(encodeURIComponent).join(',')}`);
  const xs = c.experiments;
  const names = c.scores.map((s) => s.name);
  render('Compare experiments',
    h('table', { id: 'compare-scores' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Score'),
      xs.map((x, i) => h('th', { scope: 'col' }, h('a', { href: `#/experiments/${x.id}` }, x.name), i ? ' (Δ)' : '')))),
    h('tbody', {}, c.scores.map((s) => h('tr', { 'data-score': s.name }, h('td', {}, s.name),
      s.means.map((m, i) => h('td', { class: 'num', 'data-col': i }, fmt(m), i && s.diffs[i] != null ? ` (${s.diffs[i] >= 0 ? '+' : ''}${fmt(s.diffs[i])})` : '')))))),
    h('h2', {}, 'Items'),
    h('table', { id: 'compare-items' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Item'),
      xs.map((x) => h('th', { scope: 'col' }, `${x.name}: output`)), xs.map((x) => names.map((n) => h('th', { scope: 'col' }, `${n} (${x.id.slice(0, 6)})`))))),
    h('tbody', {}, c.items.map((it) => h('tr', { 'data-item': it.item_id }, h('td', {}, h('code', {}, it.item_id.slice(0, 8))),
      it.runs.map((r) => h('td', { class: 'output' }, r ? text(r.output) : '—')),
      it.runs.map((r) => names.map((n) => h('td', { class: 'num' }, fmt(r?.scores?.[n])))))))));
}

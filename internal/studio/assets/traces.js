// Studio's traces: the filtered list of every trace (runs and ingested OTLP/SDK traces),
// paginated by the server, and the trace view (waterfall, span tree, span panel).
import { call } from './api.js';
import { STATUSES, badge, cost, field, filterHash, h, listQuery, pager, pick, render, textFilter, timeFilters, when } from './ui.js';
import { go } from './nav.js';
import { agentNames } from './executions.js';
import { traceView } from './traceview.js';

/** The list's filters: query parameters of GET /traces, kept as they are in the page's hash. */
const FILTERS = ['agent_id', 'status', 'end_user_id', 'session_id', 'service_name', 'created_after', 'created_before',
  'min_cost', 'max_cost', 'min_duration_ms', 'max_duration_ms'];

export async function tracesPage(params) {
  const q = listQuery(params, FILTERS);
  const [res, names] = await Promise.all([call('GET', `/traces?${q}`, undefined, { full: true }), agentNames()]);

  const controls = {
    agent_id: pick('t-agent', [...names.keys()], params.get('agent_id'), [...names.values()]),
    status: pick('t-status', STATUSES, params.get('status')),
    end_user_id: textFilter('t-end-user', params, 'end_user_id'),
    session_id: textFilter('t-session', params, 'session_id'),
    service_name: textFilter('t-service', params, 'service_name'),
    ...timeFilters('t', params),
    min_cost: h('input', { id: 't-min-cost', type: 'number', min: 0, step: 'any', value: params.get('min_cost') || '' }),
    max_cost: h('input', { id: 't-max-cost', type: 'number', min: 0, step: 'any', value: params.get('max_cost') || '' }),
    min_duration_ms: h('input', { id: 't-min-ms', type: 'number', min: 0, step: 1, value: params.get('min_duration_ms') || '' }),
    max_duration_ms: h('input', { id: 't-max-ms', type: 'number', min: 0, step: 1, value: params.get('max_duration_ms') || '' }),
  };
  const query = (p) => filterHash('#/traces', controls, p);
  const c = controls;
  render('Traces',
    h('form', { id: 'trace-filters', onsubmit: (ev) => { ev.preventDefault(); go(query(1)); } },
      h('div', { class: 'row' }, field('Agent', c.agent_id), field('Status', c.status), field('End user', c.end_user_id),
        field('Session', c.session_id), field('Service', c.service_name)),
      h('div', { class: 'row' }, field('From', c.created_after), field('To', c.created_before),
        field('Cost from (USD)', c.min_cost), field('Cost to (USD)', c.max_cost),
        field('Latency from (ms)', c.min_duration_ms), field('Latency to (ms)', c.max_duration_ms),
        h('button', { type: 'submit', id: 't-apply' }, 'Filter'), h('a', { href: '#/traces', id: 't-clear' }, 'Clear'))),
    res.data.length
      ? h('table', { id: 'traces' }, h('thead', {}, h('tr', {}, ['Trace', 'Agent', 'Status', 'From', 'End user', 'Started', 'Duration', 'Tokens', 'Cost']
        .map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, res.data.map((t) => h('tr', { 'data-trace': t.id },
        h('td', {}, h('a', { href: `#/traces/${encodeURIComponent(t.id)}` }, t.name || t.id)),
        h('td', {}, t.agent_id ? names.get(t.agent_id) || t.agent_id : '—'),
        h('td', {}, badge(t.status)),
        h('td', {}, t.execution_id ? h('a', { href: `#/executions/${t.execution_id}` }, 'run') : t.service_name || 'ingested'),
        h('td', {}, t.end_user_id || '—'),
        h('td', {}, when(t.started_at)),
        h('td', { class: 'num' }, t.duration_ms != null ? `${t.duration_ms} ms` : '—'),
        h('td', { class: 'num' }, t.token_usage?.total_tokens ?? 0),
        h('td', { class: 'num' }, cost(t.cost))))))
      : h('p', { class: 'muted', id: 'traces-empty' }, 'No traces match.'),
    pager(res.pagination, (p) => go(query(p))));
}

export async function tracePage(id) {
  const t = await call('GET', `/traces/${encodeURIComponent(id)}`);
  const agent = t.agent_id ? await call('GET', `/agents/${t.agent_id}`).catch(() => null) : null;
  const u = t.token_usage || {};
  render(t.name || `Trace ${t.id}`,
    h('dl', { class: 'kv', id: 'trace-meta' },
      h('dt', {}, 'Trace'), h('dd', {}, h('code', {}, t.id)),
      h('dt', {}, 'Status'), h('dd', {}, badge(t.status)),
      t.agent_id ? [h('dt', {}, 'Agent'), h('dd', {}, h('a', { href: `#/agents/${t.agent_id}` }, agent?.name || t.agent_id))] : null,
      t.execution_id ? [h('dt', {}, 'Execution'), h('dd', {}, h('a', { href: `#/executions/${t.execution_id}` }, t.execution_id))] : null,
      t.service_name ? [h('dt', {}, 'Service'), h('dd', {}, t.service_name)] : null,
      t.session_id ? [h('dt', {}, 'Session'), h('dd', {}, t.session_id)] : null,
      t.end_user_id ? [h('dt', {}, 'End user'), h('dd', {}, t.end_user_id)] : null,
      h('dt', {}, 'Started'), h('dd', {}, when(t.started_at)),
      h('dt', {}, 'Duration'), h('dd', {}, t.duration_ms != null ? `${t.duration_ms} ms` : '—'),
      h('dt', {}, 'Tokens'), h('dd', {}, `${u.total_tokens ?? 0} (${u.prompt_tokens ?? 0} prompt, ${u.completion_tokens ?? 0} completion)`),
      h('dt', {}, 'Cost'), h('dd', {}, cost(t.cost)),
      h('dt', {}, 'Spans'), h('dd', { id: 'trace-span-count' }, t.span_count)),
    h('h2', {}, 'Spans'),
    traceView(t));
}

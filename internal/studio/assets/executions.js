// Studio's execution pages: the filtered list, the detail (trace waterfall, children,
// scores, live frames, cancel) and the approvals inbox.
import { call } from './api.js';
import { STATUSES, act, badge, cost, field, filterHash, h, json, listQuery, pager, parseJSON, pick, render, textFilter, timeFilters, toast, when } from './ui.js';
import { go, pageAbort, route } from './nav.js';
import { watchRun } from './agents.js';
import { traceView } from './traceview.js';

const SOURCES = ['api', 'studio', 'playground', 'chat', 'webhook', 'schedule', 'slack', 'telegram', 'teams', 'whatsapp', 'agent'];
const FILTERS = ['agent_id', 'status', 'source', 'end_user_id', 'created_after', 'created_before'];

export async function agentNames() {
  const list = await call('GET', '/agents?limit=100');
  return new Map(list.map((a) => [a.id, a.name]));
}

export async function executionsPage(params) {
  const q = listQuery(params, FILTERS);
  const [res, names] = await Promise.all([call('GET', `/executions?${q}`, undefined, { full: true }), agentNames()]);
  const controls = {
    agent_id: pick('f-agent', [...names.keys()], params.get('agent_id'), [...names.values()]),
    status: pick('f-status', STATUSES, params.get('status')),
    source: pick('f-source', SOURCES, params.get('source')),
    end_user_id: textFilter('f-end-user', params, 'end_user_id'),
    ...timeFilters('f', params),
  };
  const query = (p) => filterHash('#/executions', controls, p);
  const c = controls;
  render('Executions',
    h('form', { class: 'row filters', id: 'exec-filters', onsubmit: (ev) => { ev.preventDefault(); go(query(1)); } },
      field('Agent', c.agent_id), field('Status', c.status), field('Source', c.source), field('End user', c.end_user_id),
      field('From', c.created_after), field('To', c.created_before),
      h('button', { type: 'submit', id: 'f-apply' }, 'Filter'), h('a', { href: '#/executions', id: 'f-clear' }, 'Clear')),
    res.data.length
      ? h('table', { id: 'executions' }, h('thead', {}, h('tr', {}, ['Execution', 'Agent', 'Status', 'Source', 'End user', 'Created', 'Duration', 'Tokens', 'Cost'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, res.data.map((x) => h('tr', { 'data-execution': x.id },
          h('td', {}, h('a', { href: `#/executions/${x.id}` }, x.id)), h('td', {}, names.get(x.agent_id) || x.agent_id),
          h('td', {}, badge(x.status)), h('td', {}, x.source), h('td', {}, x.end_user_id || '—'), h('td', {}, when(x.created_at)),
          h('td', { class: 'num' }, x.duration_ms != null ? `${x.duration_ms} ms` : '—'), h('td', { class: 'num' }, x.token_usage?.total_tokens ?? 0),
          h('td', { class: 'num' }, cost(x.cost))))))
      : h('p', { class: 'muted', id: 'executions-empty' }, 'No executions match.'),
    pager(res.pagination, (p) => go(query(p))));
}

function childTree(node) {
  if (!node.children?.length) return null;
  return h('ul', {}, node.children.map((c) => h('li', {},
    h('a', { href: `#/executions/${c.id}` }, c.id), ' ', badge(c.status), ` ${c.source}`, childTree(c))));
}

/** The live frames of a pending or running execution, streamed while the page is open. */
function liveSection(id, status) {
  const out = h('div', { class: 'stream', 'aria-live': 'polite' });
  const summary = h('div', {});
  watchRun(id, out, summary, status).catch((e) => {
    if (e.name !== 'AbortError') summary.replaceChildren(h('p', { class: 'error', role: 'alert' }, e.message));
  });
  return h('section', { 'aria-labelledby': 'h-live' }, h('h2', { id: 'h-live' }, 'Live'), out, summary);
}

export async function executionPage(id) {
  const x = await call('GET', `/executions/${id}`);
  const [tree, trace, scores, agent] = await Promise.all([
    call('GET', `/executions/${id}/tree`).catch((e) => e),
    x.trace_id ? call('GET', `/traces/${x.trace_id}`).catch((e) => e) : null,
    call('GET', `/scores?execution_id=${encodeURIComponent(id)}&limit=100`).catch((e) => e),
    call('GET', `/agents/${x.agent_id}`).catch(() => null),
  ]);
  const live = ['pending', 'running', 'awaiting_approval'].includes(x.status);
  const actions = h('div', { class: 'row' });
  if (live) {
    actions.append(h('button', { type: 'button', class: 'danger', id: 'cancel', onclick: (ev) => act(ev.currentTarget, async () => {
      await call('POST', `/executions/${id}/cancel`);
      toast('Cancelled');
      route();
    }) }, 'Cancel execution'));
  }
  const u = x.token_usage || {};
  render(`Execution ${x.id}`,
    h('dl', { class: 'kv' },
      h('dt', {}, 'Status'), h('dd', { id: 'x-status' }, badge(x.status)),
      h('dt', {}, 'Agent'), h('dd', { id: 'x-agent' }, h('a', { href: `#/agents/${x.agent_id}`, title: x.agent_id }, agent?.name || x.agent_id)),
      h('dt', {}, 'Source'), h('dd', {}, x.source),
      h('dt', {}, 'Created'), h('dd', {}, when(x.created_at)),
      h('dt', {}, 'Completed'), h('dd', {}, when(x.completed_at)),
      h('dt', {}, 'Duration'), h('dd', {}, x.duration_ms != null ? `${x.duration_ms} ms` : '—'),
      h('dt', {}, 'Tokens'), h('dd', {}, `${u.total_tokens ?? 0} (${u.prompt_tokens ?? 0} prompt, ${u.completion_tokens ?? 0} completion)`),
      h('dt', {}, 'Cost'), h('dd', {}, cost(x.cost)),
      h('dt', {}, 'Trace'), h('dd', {}, x.trace_id || '—'),
      x.parent_id ? [h('dt', {}, 'Parent'), h('dd', {}, h('a', { href: `#/executions/${x.parent_id}` }, x.parent_id))] : null),
    actions,
    x.status === 'awaiting_approval' ? h('p', {}, 'Waiting at an approval checkpoint: decide in the ', h('a', { href: '#/approvals' }, 'approvals inbox'), '.') : null,
    live ? liveSection(id, x.status) : null,
    h('h2', {}, 'Input'), h('pre', { id: 'x-input' }, json(x.input)),
    h('h2', {}, 'Output'), h('pre', { id: 'x-output' }, json(x.output)),
    x.error ? [h('h2', {}, 'Error'), h('pre', { class: 'error', id: 'x-error' }, x.error)] : null,
    h('h2', {}, 'Trace'),
    trace instanceof Error ? h('p', { class: 'muted' }, `The trace is not available: ${trace.message}`) : trace ? [h('p', {}, h('a', { href: `#/traces/${encodeURIComponent(x.trace_id)}` }, 'Open the trace')), traceView(trace)] : h('p', { class: 'muted' }, 'No trace.'),
    tree instanceof Error || !tree.children?.length ? null : [h('h2', {}, 'Child executions'), childTree(tree)],
    scoresSection(id, scores));
}

/** The execution's scores, and a form to annotate it with a numeric score. */
function scoresSection(id, scores) {
  if (scores instanceof Error) return [h('h2', {}, 'Scores'), h('p', { class: 'muted' }, `Scores are not available: ${scores.message}`)];
  const name = h('input', { id: 'score-name', required: true, maxlength: 200, value: 'quality' });
  const value = h('input', { id: 'score-value', type: 'number', step: 'any', required: true });
  const comment = h('input', { id: 'score-comment', maxlength: 10000 });
  return h('section', { 'aria-labelledby': 'h-scores' }, h('h2', { id: 'h-scores' }, 'Scores'),
    scores.length ? h('table', { id: 'scores' }, h('thead', {}, h('tr', {}, ['Name', 'Value', 'Source', 'Comment', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, scores.map((sc) => h('tr', {}, h('td', {}, sc.name), h('td', {}, sc.string_value ?? sc.value ?? '—'),
        h('td', {}, sc.source), h('td', {}, sc.comment || '—'), h('td', {}, when(sc.created_at))))))
      : h('p', { class: 'muted' }, 'No scores yet.'),
    h('form', {
      class: 'row',
      onsubmit: (ev) => {
        ev.preventDefault();
        act(ev.submitter, async () => {
          await call('POST', '/scores', { name: name.value, data_type: 'numeric', value: Number(value.value), execution_id: id, source: 'annotation', comment: comment.value || undefined });
          toast('Score saved');
          route();
        });
      },
    }, field('Score name', name), field('Value', value), field('Comment', comment), h('button', { type: 'submit', id: 'score-add' }, 'Add score')));
}

// --- approvals ---------------------------------------------------------------------------

export async function approvalsPage() {
  const list = await call('GET', '/approvals?limit=50');
  render('Approvals inbox', list.length ? list.map((a) => {
    const comment = h('textarea', { id: `comment-${a.id}`, maxlength: 2000 });
    const calls = (a.calls || []).map(pendingCall);
    const answer = a.kind === 'question' ? h('input', { id: `answer-${a.id}`, class: 'answer', maxlength: 20000, list: `choices-${a.id}` }) : null;
    const decide = (verb) => (ev) => act(ev.currentTarget, async () => {
      const body = verb === 'approve' ? { comment: comment.value } : { reason: comment.value };
      if (verb === 'approve') {
        const decisions = calls.map((c) => c.decision()).filter(Boolean);
        if (decisions.length) body.decisions = decisions;
        if (answer) body.answer = answer.value;
      }
      await call('POST', `/executions/${a.execution_id}/${verb}`, body);
      toast(verb === 'approve' ? 'Approved: the run continues' : 'Denied: the run ends rejected');
      route();
    });
    return h('section', { class: 'card approval', 'aria-label': `${a.agent_name}: ${a.checkpoint}` },
      h('h2', {}, `${a.agent_name} · ${a.checkpoint}`),
      h('p', { class: 'muted' }, `Requested ${when(a.requested_at)} · execution `, h('a', { href: `#/executions/${a.execution_id}` }, a.execution_id),
        a.expires_at ? ` · decided by timeout (${a.on_timeout}) ${when(a.expires_at)}` : ''),
      a.description ? h('p', {}, a.description) : null,
      a.question ? h('p', { class: 'question' }, a.question) : null,
      answer ? field('Answer', answer) : null,
      answer ? h('datalist', { id: `choices-${a.id}` }, ...(a.choices || []).map((c) => h('option', { value: c }))) : null,
      calls.length ? h('div', { class: 'calls' }, ...calls.map((c) => c.el)) : h('pre', {}, json(a.awaiting)),
      field('Comment (sent as the reason when denying)', comment),
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'primary approve', onclick: decide('approve') }, 'Approve'),
        h('button', { type: 'button', class: 'danger deny', onclick: decide('deny') }, 'Deny')));
  }) : h('p', { class: 'muted', id: 'inbox-empty' }, 'Nothing is waiting for a decision.'));
}

// pendingCall is one held tool call of the inbox: its arguments, editable, and a reject
// reason. decision() says what to send for it: edit when the arguments changed, reject when
// the box is ticked, nothing (approved) otherwise.
function pendingCall(c) {
  const original = JSON.stringify(c.arguments, null, 2);
  const args = h('textarea', { class: 'call-args', rows: 4, 'aria-label': `Arguments of ${c.call_id}` });
  args.value = original;
  const reject = h('input', { type: 'checkbox', class: 'call-reject' });
  const reason = h('input', { class: 'call-reason', maxlength: 2000, placeholder: 'Why (the model reads it)', 'aria-label': `Reason to reject ${c.call_id}` });
  const el = h('fieldset', { class: 'call', 'data-call': c.call_id },
    h('legend', {}, `${c.name} · ${c.call_id}`),
    args,
    h('label', { class: 'row' }, reject, ' Reject', reason));
  const decision = () => {
    if (reject.checked) return { call_id: c.call_id, decision: 'reject', message: reason.value };
    if (args.value.trim() !== original.trim()) return { call_id: c.call_id, decision: 'edit', arguments: parseJSON(args.value, `The arguments of ${c.call_id}`) };
    return null;
  };
  return { el, decision };
}

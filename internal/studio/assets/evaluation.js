// Evaluation: datasets and their items (made by hand or from a past run), evaluators (edit,
// and test one on an output without storing anything), and online evaluation rules.
import { call, callAll } from './api.js';
import { act, badge, confirmButton, cost, field, h, json, pager, parseJSON, render, toast, when } from './ui.js';
import { go, route } from './nav.js';
import { agentNames } from './executions.js';

/** Reads an optional JSON text area: undefined when blank. */
function optionalJSON(el, what) {
  return el.value.trim() ? parseJSON(el.value, what) : undefined;
}

const table = (id, heads, rows) => h('table', { id },
  h('thead', {}, h('tr', {}, heads.map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, rows));

// --- datasets ----------------------------------------------------------------------------

export async function datasetsPage(params) {
  const page = Number(params.get('page') || 1);
  const res = await call('GET', `/datasets?page=${page}&limit=25`, undefined, { full: true });
  const name = h('input', { id: 'dataset-name', required: true, maxlength: 200 });
  const desc = h('input', { id: 'dataset-description', maxlength: 2000 });
  render('Datasets',
    h('p', { class: 'muted' }, 'Named sets of test cases (an input, and the output expected of it) to run agents on and score.'),
    res.data.length ? table('datasets', ['Dataset', 'Items', 'Version', 'Updated'], res.data.map((d) => h('tr', {},
      h('td', {}, h('a', { href: `#/datasets/${d.id}` }, d.name), d.description ? h('div', { class: 'muted' }, d.description) : null),
      h('td', { class: 'count' }, d.item_count), h('td', {}, d.version), h('td', {}, when(d.updated_at)))))
      : h('p', { class: 'muted', id: 'datasets-empty' }, 'No dataset yet.'),
    pager(res.pagination, (n) => go(`#/datasets?page=${n}`)),
    h('section', { class: 'card' }, h('h2', {}, 'New dataset'),
      h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            const d = await call('POST', '/datasets', { name: name.value.trim(), description: desc.value });
            toast(`Dataset ${d.name} created`);
            go(`#/datasets/${d.id}`);
          });
        },
      }, field('Name', name), field('Description', desc),
      h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'dataset-create' }, 'Create dataset')))));
}

export async function datasetPage(id, params) {
  const page = Number(params.get('page') || 1);
  const [d, res, recent, names] = await Promise.all([call('GET', `/datasets/${id}`),
    call('GET', `/datasets/${id}/items?page=${page}&limit=25`, undefined, { full: true }),
    call('GET', '/executions?status=completed&limit=50'), agentNames()]);
  const input = h('textarea', { id: 'item-input', required: true, value: '{\n  "message": ""\n}' });
  const expected = h('textarea', { id: 'item-expected', placeholder: 'optional: any JSON' });
  const fromRun = h('select', { id: 'item-execution', required: true },
    recent.map((x) => h('option', { value: x.id }, `${names.get(x.agent_id) || x.agent_id} · ${when(x.created_at)} · ${x.id}`)));
  const fromExpected = h('textarea', { id: 'item-execution-expected', placeholder: "optional: any JSON (default: the run's output)" });
  const added = (what) => { toast(what); route(); };
  render(d.name,
    h('p', { class: 'muted', id: 'dataset-summary' }, `${d.item_count} items · version ${d.version}`, d.description ? ` · ${d.description}` : ''),
    res.data.length ? table('items', ['Input', 'Expected output', 'From run', 'Added', ''], res.data.map((it) => h('tr', { 'data-item': it.id },
      h('td', {}, h('pre', { class: 'item-input' }, json(it.input))),
      h('td', {}, h('pre', { class: 'item-expected' }, it.expected_output == null ? '—' : json(it.expected_output))),
      h('td', {}, it.source_execution_id ? h('a', { href: `#/executions/${it.source_execution_id}` }, it.source_execution_id) : '—'),
      h('td', {}, when(it.created_at)),
      h('td', {}, confirmButton({ class: 'danger item-delete' }, 'Delete', 'Really delete?', async () => {
        await call('DELETE', `/datasets/${id}/items/${it.id}`);
        added('Item deleted');
      })))))
      : h('p', { class: 'muted', id: 'items-empty' }, 'No item yet: add one below, by hand or from a past run.'),
    pager(res.pagination, (n) => go(`#/datasets/${id}?page=${n}`)),
    h('section', { class: 'card' }, h('h2', {}, 'Add from a run'),
      recent.length ? h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            await call('POST', `/datasets/${id}/items`, { source_execution_id: fromRun.value, expected_output: optionalJSON(fromExpected, 'The expected output') });
            added('Item added from the run');
          });
        },
      }, field('Completed run', fromRun, "Its input becomes the item's input; its output the expected output, unless you give one."),
      field('Expected output (JSON)', fromExpected),
      h('div', { class: 'row' }, h('button', { type: 'submit', id: 'item-from-run' }, 'Add from run')))
        : h('p', { class: 'muted' }, 'No completed run yet.')),
    h('section', { class: 'card' }, h('h2', {}, 'Add an item'),
      h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            await call('POST', `/datasets/${id}/items`, { input: parseJSON(input.value, 'The input'), expected_output: optionalJSON(expected, 'The expected output') });
            added('Item added');
          });
        },
      }, field('Input (JSON object)', input), field('Expected output (JSON)', expected),
      h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'item-add' }, 'Add item')))));
}

// --- evaluators --------------------------------------------------------------------------

const EVALUATOR_TYPES = ['exact_match', 'contains', 'regex', 'json_schema', 'json_match', 'similarity', 'llm_judge'];
const EXAMPLE_CONFIG = {
  regex: { pattern: '\\S' },
  json_schema: { schema: { type: 'object' } },
  json_match: { fields: ['answer'] },
  llm_judge: { model: 'gpt-4o-mini', prompt: 'Question: {{input.message}}\nAnswer: {{output}}\nIs the answer helpful?' },
};

/** The controls of an evaluator's fields, filled from e (a stored one) or blank. */
function evaluatorForm(e) {
  const c = {
    name: h('input', { id: 'ev-name', required: true, maxlength: 200, value: e?.name || '' }),
    description: h('input', { id: 'ev-description', maxlength: 2000, value: e?.description || '' }),
    type: h('select', { id: 'ev-type' }, EVALUATOR_TYPES.map((t) => h('option', { value: t, selected: t === (e?.type || 'contains') }, t))),
    config: h('textarea', { id: 'ev-config', class: 'config', value: json(e?.config || {}) }),
    score_name: h('input', { id: 'ev-score-name', maxlength: 200, value: e?.score_name || '' }),
  };
  if (!e) {
    c.type.addEventListener('change', () => { c.config.value = json(EXAMPLE_CONFIG[c.type.value] || {}); });
  }
  return c;
}

function evaluatorBody(c) {
  return { name: c.name.value.trim(), description: c.description.value, type: c.type.value,
    config: parseJSON(c.config.value || '{}', 'The config'), score_name: c.score_name.value.trim() || undefined };
}

const evaluatorFields = (c) => [field('Name', c.name), field('Description', c.description), field('Type', c.type),
  field('Config (JSON)', c.config, 'The options of the type: see the evaluator types in the README.'),
  field('Score name', c.score_name, "Default: the evaluator's name.")];

export async function evaluatorsPage(params) {
  const page = Number(params.get('page') || 1);
  const res = await call('GET', `/evaluators?page=${page}&limit=25`, undefined, { full: true });
  const c = evaluatorForm(null);
  render('Evaluators',
    h('p', { class: 'muted' }, "Checks that turn a run's output into a score: deterministic ones, or a model acting as judge."),
    res.data.length ? table('evaluators', ['Evaluator', 'Type', 'Score', 'Updated'], res.data.map((e) => h('tr', {},
      h('td', {}, h('a', { href: `#/evaluators/${e.id}` }, e.name), e.description ? h('div', { class: 'muted' }, e.description) : null),
      h('td', {}, e.type), h('td', {}, `${e.score_name} (${e.data_type})`), h('td', {}, when(e.updated_at)))))
      : h('p', { class: 'muted', id: 'evaluators-empty' }, 'No evaluator yet.'),
    pager(res.pagination, (n) => go(`#/evaluators?page=${n}`)),
    h('section', { class: 'card' }, h('h2', {}, 'New evaluator'),
      h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            const e = await call('POST', '/evaluators', evaluatorBody(c));
            toast(`Evaluator ${e.name} created`);
            go(`#/evaluators/${e.id}`);
          });
        },
      }, evaluatorFields(c), h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'ev-create' }, 'Create evaluator')))));
}

/** The result of a test: the value, why, and what a judge cost. */
function testResult(r) {
  const value = r.string_value ?? r.value;
  return [h('p', {}, h('strong', { id: 'test-value' }, String(value)), ` ${r.name} (${r.data_type})`),
    h('p', { id: 'test-comment' }, r.comment || '—'),
    r.trace_id ? h('p', { class: 'muted' }, `${r.token_usage.total_tokens} tokens · ${cost(r.cost)} · `,
      h('a', { href: `#/traces/${r.trace_id}` }, 'judge trace')) : null];
}

export async function evaluatorPage(id) {
  const [e, rules] = await Promise.all([call('GET', `/evaluators/${id}`), call('GET', `/evaluation-rules?evaluator_id=${id}&limit=100`)]);
  const c = evaluatorForm(e);
  const tin = h('textarea', { id: 'test-input', value: '{\n  "message": "Where is my order?"\n}' });
  const tout = h('textarea', { id: 'test-output', required: true, value: '{\n  "content": "It ships today."\n}' });
  const texp = h('textarea', { id: 'test-expected', placeholder: 'optional: any JSON' });
  const result = h('div', { id: 'test-result', 'aria-live': 'polite' });
  render(e.name,
    h('p', { class: 'muted' }, `${e.type} · gives ${e.score_name} (${e.data_type}) · used by ${rules.length} evaluation rule(s) · `,
      h('a', { href: `#/rules?evaluator_id=${id}` }, 'rules')),
    h('section', { class: 'card', 'aria-labelledby': 'h-test' }, h('h2', { id: 'h-test' }, 'Test'),
      h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            const r = await call('POST', `/evaluators/${id}/test`, { input: optionalJSON(tin, 'The input'),
              output: parseJSON(tout.value, 'The output'), expected_output: optionalJSON(texp, 'The expected output') });
            result.replaceChildren(...testResult(r));
          });
        },
      }, field('Input (JSON object)', tin), field('Output (JSON)', tout, 'An agent\'s answer is {"content": text}.'),
      field('Expected output (JSON)', texp),
      h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'ev-test' }, 'Score it (nothing is stored)'))),
      result),
    h('section', { class: 'card', 'aria-labelledby': 'h-edit' }, h('h2', { id: 'h-edit' }, 'Edit'),
      h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            await call('PATCH', `/evaluators/${id}`, evaluatorBody(c));
            toast('Evaluator saved');
            route();
          });
        },
      }, evaluatorFields(c), h('div', { class: 'row' },
        h('button', { class: 'primary', type: 'submit', id: 'ev-save' }, 'Save'),
        confirmButton({ class: 'danger', id: 'ev-delete' }, 'Delete', 'Really delete (and its rules)?', async () => {
          await call('DELETE', `/evaluators/${id}`);
          toast('Evaluator deleted');
          go('#/evaluators');
        })))));
}

// --- evaluation rules --------------------------------------------------------------------

const FINAL_STATUSES = ['completed', 'failed', 'cancelled', 'rejected'];

/** The controls of a rule's fields, filled from r (a stored one) or with the defaults. */
function ruleForm(r, evaluators, names) {
  const status = r?.filter.status || ['completed'];
  return {
    evaluator_id: h('select', { id: 'rule-evaluator', required: true },
      evaluators.map((e) => h('option', { value: e.id, selected: e.id === r?.evaluator_id }, `${e.name} (${e.type})`))),
    agent_id: h('select', { id: 'rule-agent' }, h('option', { value: '' }, 'All agents'),
      [...names].map(([aid, n]) => h('option', { value: aid, selected: aid === r?.agent_id }, n))),
    sampling: h('input', { id: 'rule-sampling', type: 'number', min: 0, max: 100, step: 'any', required: true, value: String(Math.round((r?.sampling ?? 1) * 1000) / 10) }),
    status: FINAL_STATUSES.map((s) => h('input', { type: 'checkbox', class: 'rule-status', value: s, checked: status.includes(s) })),
    source: h('input', { id: 'rule-source', value: (r?.filter.source || []).join(', '), placeholder: 'any (or e.g. api, chat)' }),
    metadata: h('textarea', { id: 'rule-metadata', value: json(r?.filter.metadata || {}) }),
    enabled: h('input', { id: 'rule-enabled', type: 'checkbox', checked: r ? r.enabled : true }),
  };
}

function ruleBody(c) {
  const pct = Number(c.sampling.value);
  if (c.sampling.value.trim() === '' || Number.isNaN(pct)) throw new Error('Sampling must be a percentage from 0 to 100.');
  return {
    evaluator_id: c.evaluator_id.value,
    agent_id: c.agent_id.value || null,
    sampling: pct / 100,
    filter: {
      status: c.status.filter((b) => b.checked).map((b) => b.value),
      source: c.source.value.split(',').map((s) => s.trim()).filter(Boolean),
      metadata: parseJSON(c.metadata.value || '{}', 'The metadata filter'),
    },
    enabled: c.enabled.checked,
  };
}

const ruleFields = (c) => [field('Evaluator', c.evaluator_id), field('Agent', c.agent_id),
  field('Sampling (% of matching runs)', c.sampling, 'Which runs is decided by a hash of the rule and run ids: the same run is always in or out.'),
  h('fieldset', {}, h('legend', {}, 'Final status'), c.status.map((b) => h('label', { class: 'check' }, b, ` ${b.value}`))),
  field('Sources (comma-separated)', c.source), field('Metadata equal to (JSON object)', c.metadata),
  h('label', { class: 'check' }, c.enabled, ' Enabled')];

function filterText(f) {
  const parts = [`status ${f.status.join('/')}`];
  if (f.source.length) parts.push(`source ${f.source.join('/')}`);
  for (const [k, v] of Object.entries(f.metadata)) parts.push(`${k} = ${JSON.stringify(v)}`);
  return parts.join(' · ');
}

export async function rulesPage(params) {
  const page = Number(params.get('page') || 1);
  const q = new URLSearchParams({ page, limit: 25 });
  if (params.get('evaluator_id')) q.set('evaluator_id', params.get('evaluator_id'));
  const [res, evaluators, names] = await Promise.all([call('GET', `/evaluation-rules?${q}`, undefined, { full: true }),
    callAll('/evaluators'), agentNames()]);
  const evNames = new Map(evaluators.map((e) => [e.id, e.name]));
  const toggle = (r) => (ev) => act(ev.currentTarget, async () => {
    await call('PATCH', `/evaluation-rules/${r.id}`, { enabled: !r.enabled });
    toast(`Rule ${r.enabled ? 'disabled' : 'enabled'}`);
    route();
  });
  const c = ruleForm(null, evaluators, names);
  render('Evaluation rules',
    h('p', { class: 'muted' }, 'Online evaluation: each finished run a rule matches is scored once by its evaluator, in the background; the run never waits for it.'),
    res.data.length ? table('rules', ['Evaluator', 'Agent', 'Sampling', 'Filter', 'Judged', 'Pending', 'Failed', 'State', ''], res.data.map((r) => h('tr', { 'data-rule': r.id },
      h('td', {}, h('a', { href: `#/rules/${r.id}` }, evNames.get(r.evaluator_id) || r.evaluator_id)),
      h('td', {}, r.agent_id ? names.get(r.agent_id) || r.agent_id : 'All agents'),
      h('td', {}, `${Math.round(r.sampling * 1000) / 10}%`), h('td', { class: 'muted' }, filterText(r.filter)),
      h('td', { class: 'completed' }, r.judgments.completed), h('td', { class: 'pending' }, r.judgments.pending), h('td', { class: 'failed' }, r.judgments.failed),
      h('td', {}, badge(r.enabled ? 'enabled' : 'disabled')),
      h('td', {}, h('button', { type: 'button', class: 'rule-toggle', onclick: toggle(r) }, r.enabled ? 'Disable' : 'Enable')))))
      : h('p', { class: 'muted', id: 'rules-empty' }, 'No evaluation rule yet.'),
    pager(res.pagination, (n) => go(`#/rules?page=${n}`)),
    h('section', { class: 'card' }, h('h2', {}, 'New rule'),
      evaluators.length ? h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            const body = ruleBody(c);
            if (!body.agent_id) delete body.agent_id;
            await call('POST', '/evaluation-rules', body);
            toast('Rule created');
            route();
          });
        },
      }, ruleFields(c), h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'rule-create' }, 'Create rule')))
        : h('p', { class: 'muted' }, 'Create an evaluator first: ', h('a', { href: '#/evaluators' }, 'Evaluators'), '.')));
}

export async function rulePage(id) {
  const [r, evaluators, names] = await Promise.all([call('GET', `/evaluation-rules/${id}`), callAll('/evaluators'), agentNames()]);
  const [scores, failed] = await Promise.all([call('GET', `/scores?rule_id=${id}&limit=20`),
    call('GET', `/evaluation-rules/${id}/judgments?status=failed&limit=20`)]);
  const c = ruleForm(r, evaluators, names);
  const ev = evaluators.find((e) => e.id === r.evaluator_id);
  render(`Rule: ${ev?.name || r.evaluator_id}`,
    h('p', { class: 'muted', id: 'rule-counts' }, `${r.judgments.completed} judged · ${r.judgments.pending} pending · ${r.judgments.failed} failed`),
    h('section', { class: 'card', 'aria-labelledby': 'h-rule-edit' }, h('h2', { id: 'h-rule-edit' }, 'Edit'),
      h('form', {
        onsubmit: (e) => {
          e.preventDefault();
          act(e.submitter, async () => {
            await call('PATCH', `/evaluation-rules/${id}`, ruleBody(c));
            toast('Rule saved');
            route();
          });
        },
      }, ruleFields(c), h('div', { class: 'row' },
        h('button', { class: 'primary', type: 'submit', id: 'rule-save' }, 'Save'),
        confirmButton({ class: 'danger', id: 'rule-delete' }, 'Delete', 'Really delete?', async () => {
          await call('DELETE', `/evaluation-rules/${id}`);
          toast('Rule deleted');
          go('#/rules');
        })))),
    failed.length ? h('section', { 'aria-labelledby': 'h-rule-failed' }, h('h2', { id: 'h-rule-failed' }, 'Failed judgments'),
      table('rule-failed', ['Run', 'Attempts', 'Why', 'When'], failed.map((j) => h('tr', {},
        h('td', {}, h('a', { href: `#/executions/${j.execution_id}` }, j.execution_id)), h('td', {}, j.attempts),
        h('td', { class: 'error' }, j.last_error || '—'), h('td', {}, when(j.updated_at)))))) : null,
    h('section', { 'aria-labelledby': 'h-rule-scores' }, h('h2', { id: 'h-rule-scores' }, 'Latest scores'),
      scores.length ? table('rule-scores', ['Run', 'Score', 'Comment', 'When'], scores.map((s) => h('tr', {},
        h('td', {}, h('a', { href: `#/executions/${s.execution_id}` }, s.execution_id)),
        h('td', {}, `${s.name}: ${s.string_value ?? s.value}`), h('td', {}, s.comment || '—'), h('td', {}, when(s.created_at)))))
        : h('p', { class: 'muted' }, 'No score yet.')));
}

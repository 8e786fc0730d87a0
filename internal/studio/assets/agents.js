// Studio's agent pages: list, create, the agent page (configuration, schemas, versions,
// diff) and its playground with the live stream of a run.
import { APIError, call, stream } from './api.js';
import { act, badge, cost, field, h, json, parseJSON, pager, render, toast, when } from './ui.js';
import { go, pageAbort, route } from './nav.js';
import { configEditor, editorChoices } from './editor.js';

const AGENT_TYPES = ['simple', 'agent', 'chain', 'workflow', 'multi_agent', 'approval'];

export async function agentsPage(params) {
  const page = Number(params.get('page') || 1);
  const q = params.get('q') || '';
  const res = await call('GET', `/agents?page=${page}&limit=20&q=${encodeURIComponent(q)}`, undefined, { full: true });
  const search = h('input', { type: 'search', value: q, id: 'agent-search' });
  render('Agents',
    h('div', { class: 'row' },
      h('form', { class: 'row', role: 'search', onsubmit: (ev) => { ev.preventDefault(); go(`#/agents?q=${encodeURIComponent(search.value)}`); } },
        field('Search agents', search), h('button', { type: 'submit' }, 'Search')),
      h('a', { href: '#/agents/new', id: 'new-agent', class: 'button' }, 'New agent')),
    res.data.length
      ? h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Type', 'Status', 'Active version', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, res.data.map((a) => h('tr', {},
          h('td', {}, h('a', { href: `#/agents/${a.id}` }, a.name)), h('td', {}, a.type), h('td', {}, a.status),
          h('td', {}, a.active_version ? `v${a.active_version}` : '—'), h('td', {}, when(a.updated_at))))))
      : h('p', { class: 'muted' }, 'No agents yet.'),
    pager(res.pagination, (p) => go(`#/agents?page=${p}&q=${encodeURIComponent(q)}`)));
}

const DEFAULT_CONFIG = { model: 'gpt-4o-mini', system_prompt: 'You are a helpful assistant.' };

export function newAgentPage() {
  const name = h('input', { id: 'agent-name', required: true, maxlength: 200 });
  const type = h('select', { id: 'agent-type' }, AGENT_TYPES.map((t) => h('option', { value: t }, t)));
  const desc = h('input', { id: 'agent-description' });
  const config = h('textarea', { id: 'agent-config', class: 'config', spellcheck: 'false', value: json(DEFAULT_CONFIG) });
  render('New agent', h('form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      act(ev.submitter, async () => {
        const a = await call('POST', '/agents', { name: name.value, type: type.value, description: desc.value, config: parseJSON(config.value, 'The configuration') });
        toast(`Agent ${a.name} created`);
        go(`#/agents/${a.id}`);
      });
    },
  }, field('Name', name), field('Type', type), field('Description', desc),
  field('Configuration (JSON)', config, 'Version 1 is created from it and made active. input_schema and output_schema are JSON Schemas.'),
  h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'agent-create' }, 'Create agent'))));
  name.focus();
}

export async function agentPage(id) {
  const [agent, versions, choices] = await Promise.all([
    call('GET', `/agents/${id}`),
    call('GET', `/agents/${id}/versions?limit=100`),
    editorChoices(),
  ]);
  const name = h('input', { id: 'edit-name', value: agent.name });
  const desc = h('input', { id: 'edit-description', value: agent.description });
  const details = h('form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      act(ev.submitter, async () => {
        await call('PATCH', `/agents/${id}`, { name: name.value, description: desc.value });
        toast('Saved');
        route();
      });
    },
  }, h('div', { class: 'row' }, field('Name', name), field('Description', desc), h('button', { type: 'submit' }, 'Save details')));

  const config = h('textarea', { id: 'config', class: 'config', spellcheck: 'false', value: json(agent.config || DEFAULT_CONFIG) });
  const notes = h('input', { id: 'version-notes' });
  // Saving makes a version; it becomes active only by promoting it, after its diff.
  const saveVersion = h('form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      act(ev.submitter, async () => {
        const v = await call('POST', `/agents/${id}/versions`, { config: parseJSON(config.value, 'The configuration'), notes: notes.value });
        toast(`Version ${v.version} saved; review its diff with the active version, then promote it`);
        await route();
        document.querySelector(`button[data-promote="${v.version}"]`)?.click();
      });
    },
  }, configEditor(agent, config, choices),
  h('div', { class: 'row' }, field('Version notes', notes), h('button', { class: 'primary', type: 'submit', id: 'save-version' }, 'Save as new version')));

  const active = versions.find((v) => v.is_active);
  const diffBox = h('div', { id: 'diff-box', 'aria-live': 'polite' });
  const showDiff = (title, a, b, confirm) => {
    diffBox.replaceChildren(h('h3', {}, title), diffView(a, b), confirm ? h('div', { class: 'row' }, confirm) : null);
    diffBox.scrollIntoView({ block: 'nearest' });
  };
  const versionRows = versions.map((v) => h('tr', { 'data-version': v.version },
    h('td', {}, `v${v.version}`), h('td', {}, v.is_active ? h('strong', {}, 'active') : ''),
    h('td', {}, v.notes || '—'), h('td', {}, v.config?.model || '—'), h('td', {}, when(v.created_at)),
    h('td', {}, h('div', { class: 'row' },
      v.is_active ? null : h('button', { type: 'button', 'data-promote': v.version, onclick: () => showDiff(
        `Promote v${v.version}? What changes from the active version${active ? ` (v${active.version})` : ''}:`,
        json(active?.config ?? {}), json(v.config),
        h('button', { type: 'button', class: 'primary', id: 'promote-confirm', onclick: (ev) => act(ev.currentTarget, async () => {
          await call('POST', `/agents/${id}/versions/${v.id}/promote`);
          toast(`v${v.version} is now active`);
          route();
        }) }, `Promote v${v.version}`)) }, `Promote v${v.version}…`),
      h('button', { type: 'button', onclick: () => { config.value = json(v.config); config.dispatchEvent(new Event('reload')); toast(`v${v.version} loaded into the draft`); } }, 'Load into draft'),
      h('button', { type: 'button', onclick: () => showDiff(`The draft → v${v.version}`, config.value, json(v.config)) }, 'Diff with draft')))));

  render(agent.name,
    h('p', { class: 'muted' }, `${agent.type} · ${agent.status} · `, h('a', { href: `#/executions?agent_id=${id}` }, 'executions')),
    details,
    h('section', { 'aria-labelledby': 'h-config' }, h('h2', { id: 'h-config' }, 'Configuration'), saveVersion),
    h('section', { 'aria-labelledby': 'h-play' }, h('h2', { id: 'h-play' }, 'Playground'), playground(agent, versions, config)),
    schemaEditor(agent, config),
    h('section', { 'aria-labelledby': 'h-versions' }, h('h2', { id: 'h-versions' }, 'Versions'),
      h('table', {}, h('thead', {}, h('tr', {}, ['Version', '', 'Notes', 'Model', 'Created', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, versionRows)), diffBox));
}

/** A line diff as a table of removed, added and kept lines; "No differences." when equal. */
function diffView(a, b) {
  const lines = lineDiff(a, b).split('\n');
  if (!lines.some((l) => l.startsWith('- ') || l.startsWith('+ '))) return h('p', { class: 'muted', id: 'diff' }, 'No differences.');
  return h('pre', { id: 'diff', class: 'diff' }, lines.map((l) => h('span', { class: l.startsWith('+ ') ? 'add' : l.startsWith('- ') ? 'del' : 'same' }, l + '\n')));
}

/**
 * Edits the draft's input_schema and output_schema (JSON Schema) on their own, and checks an
 * input against the draft with POST /agents/{id}/preview: the server validates it against the
 * input schema and shows the messages the model would get, without a model call.
 */
function schemaEditor(agent, config) {
  const draft = () => parseJSON(config.value, 'The configuration');
  const initial = (() => { try { return JSON.parse(config.value); } catch { return {}; } })();
  const input = h('textarea', { id: 'input-schema', spellcheck: 'false', value: initial.input_schema ? json(initial.input_schema) : '' });
  const output = h('textarea', { id: 'output-schema', spellcheck: 'false', value: initial.output_schema ? json(initial.output_schema) : '' });
  const sample = h('textarea', { id: 'schema-sample', spellcheck: 'false', value: json({ message: 'Hello!' }) });
  const result = h('div', { id: 'schema-result', 'aria-live': 'polite' });
  const schemaOf = (el, what) => {
    if (!el.value.trim()) return undefined;
    const v = parseJSON(el.value, what);
    if (typeof v !== 'object' || Array.isArray(v) || v === null) throw new Error(`${what} must be a JSON object (a JSON Schema)`);
    return v;
  };
  const apply = () => {
    const cfg = draft();
    const inS = schemaOf(input, 'The input schema');
    const outS = schemaOf(output, 'The output schema');
    if (inS) cfg.input_schema = inS; else delete cfg.input_schema;
    if (outS) cfg.output_schema = outS; else delete cfg.output_schema;
    config.value = json(cfg);
    return cfg;
  };
  return h('section', { 'aria-labelledby': 'h-schemas' }, h('h2', { id: 'h-schemas' }, 'Input and output schemas'),
    h('div', { class: 'cols' },
      field('Input schema (JSON Schema; empty for none)', input),
      field('Output schema (JSON Schema; empty for none)', output)),
    h('div', { class: 'row' }, h('button', { type: 'button', id: 'schema-apply', onclick: (ev) => act(ev.currentTarget, async () => {
      apply();
      toast('Schemas copied into the draft configuration');
    }) }, 'Apply to draft')),
    field('Sample input (JSON)', sample),
    h('div', { class: 'row' }, h('button', { type: 'button', id: 'schema-check', onclick: (ev) => act(ev.currentTarget, async () => {
      result.replaceChildren();
      try {
        const p = await call('POST', `/agents/${agent.id}/preview`, { input: parseJSON(sample.value, 'The sample input'), config: apply() });
        result.replaceChildren(h('p', { class: 'ok' }, `Valid for the draft. The model (${p.model}) would get:`),
          h('pre', {}, p.messages.map((m) => `${m.role}: ${m.content}`).join('\n\n')));
      } catch (e) {
        if (!(e instanceof APIError) || e.status >= 500 || e.status === 401) throw e;
        result.replaceChildren(h('p', { class: 'error', role: 'alert' }, e.message));
      }
    }) }, 'Check the sample against the draft')),
    result);
}

/** A line diff (longest common subsequence) of two texts, as "- " / "+ " / "  " lines. */
function lineDiff(a, b) {
  const x = a.split('\n'), y = b.split('\n');
  const n = x.length, m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push('  ' + x[i]); i++; j++; } else if (L[i + 1][j] >= L[i][j + 1]) out.push('- ' + x[i++]); else out.push('+ ' + y[j++]);
  }
  while (i < n) out.push('- ' + x[i++]);
  while (j < m) out.push('+ ' + y[j++]);
  return out.join('\n');
}

function playground(agent, versions, config) {
  const versionSelect = (id, selected) => h('select', { id },
    h('option', { value: 'draft', selected: selected === 'draft' }, 'Draft (the configuration, unsaved)'),
    agent.active_version_id ? h('option', { value: 'active', selected: selected === 'active' }, `Active version (v${agent.active_version})`) : null,
    versions.map((v) => h('option', { value: v.id, selected: selected === v.id }, `v${v.version}`)));
  const which = versionSelect('run-version', agent.active_version_id ? 'active' : 'draft');
  const whichB = versionSelect('run-version-b', versions.find((v) => !v.is_active)?.id || 'draft');
  const compare = h('input', { type: 'checkbox', id: 'run-compare' });
  const input = h('textarea', { id: 'run-input', spellcheck: 'false', value: json({ message: 'Hello!' }) });
  const out = h('div', { id: 'run-output', class: 'stream', 'aria-live': 'polite' });
  const summary = h('div', { id: 'run-summary' });
  const outB = h('div', { id: 'run-output-b', class: 'stream', 'aria-live': 'polite' });
  const summaryB = h('div', { id: 'run-summary-b' });
  const label = (sel) => sel.options[sel.selectedIndex]?.textContent || '';
  const headA = h('h3', {}, 'Output');
  const headB = h('h3', {}, '');
  const colB = h('div', { hidden: true }, headB, outB, summaryB);
  const fieldB = field('Compare with', whichB);
  const showCompare = () => {
    fieldB.hidden = colB.hidden = !compare.checked;
    headA.textContent = compare.checked ? `A: ${label(which)}` : 'Output';
    headB.textContent = `B: ${label(whichB)}`;
  };
  compare.addEventListener('change', showCompare);
  which.addEventListener('change', showCompare);
  whichB.addEventListener('change', showCompare);
  showCompare();
  const run = h('button', { class: 'primary', type: 'submit', id: 'run' }, 'Run');
  const form = h('form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      act(run, async () => {
        const body = { input: parseJSON(input.value, 'The input'), async: true, source: 'studio' };
        const draft = which.value === 'draft' || (compare.checked && whichB.value === 'draft');
        const cfg = draft ? parseJSON(config.value, 'The configuration') : undefined;
        const runs = [startRun(agent, which.value, body, cfg, out, summary, '')];
        // Side by side: the same input to the second version, at the same time.
        if (compare.checked) runs.push(startRun(agent, whichB.value, body, cfg, outB, summaryB, '-b'));
        const failed = (await Promise.allSettled(runs)).find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
      });
    },
  }, h('div', { class: 'row' }, field('Run', which), h('div', {}, h('label', { for: 'run-compare', class: 'plain' }, compare, ' Side by side with another version')), fieldB),
  field('Input (JSON)', input), h('div', { class: 'row' }, run));
  return h('div', {}, form, h('div', { class: 'cols' }, h('div', {}, headA, out, summary), colB));
}

/** Starts one run of the playground (a version, or the draft config) and watches it into out and summary. */
async function startRun(agent, which, body, cfg, out, summary, suffix) {
  out.replaceChildren();
  summary.replaceChildren(h('p', { class: 'muted' }, 'Starting…'));
  let x;
  try {
    if (which === 'draft') {
      x = await call('POST', `/agents/${agent.id}/playground`, { ...body, config: cfg });
    } else {
      x = await call('POST', `/agents/${agent.id}/execute`, which === 'active' ? body : { ...body, version_id: which });
    }
  } catch (e) {
    // The run never started: say why where "Starting…" was, not only in a toast.
    summary.replaceChildren(h('p', { class: 'error', role: 'alert', id: `run-error${suffix}` }, `Not started: ${e.message}`));
    throw e;
  }
  await watchRun(x.id, out, summary, 'pending', suffix);
}

/** Streams a run's frames into out, then shows its status, tokens and cost in summary. */
export async function watchRun(id, out, summary, status = 'pending', suffix = '') {
  let content = null;
  const link = h('a', { href: `#/executions/${id}` }, id);
  const state = h('span', {}, badge(status));
  summary.replaceChildren(h('p', {}, 'Execution ', link, ' ', state));
  // Poll the status meanwhile: a run waiting at an approval checkpoint sends no frames.
  const poll = setInterval(async () => {
    try {
      const x = await call('GET', `/executions/${id}`);
      state.replaceChildren(badge(x.status));
      if (x.status === 'awaiting_approval' && !summary.querySelector('.inbox')) {
        summary.append(h('p', { class: 'inbox' }, 'Waiting for a decision: ', h('a', { href: '#/approvals' }, 'open the approvals inbox')));
      }
    } catch { /* shown at the end */ }
  }, 1500);
  try {
    // last_event_id=0 replays every frame from the first, so a run that finished before
    // the stream opened still shows its steps and text.
    await stream('GET', `/executions/${id}/stream?last_event_id=0`, {
      signal: pageAbort.signal,
      onEvent(name, d) {
        switch (name) {
          case 'thinking': out.append(h('div', { class: 'thinking' }, d.content)); break;
          case 'tool_start': out.append(h('div', { class: 'step' }, `▶ tool ${d.name}`)); break;
          case 'tool_end': out.append(h('div', { class: 'step' }, `✓ tool ${d.name}${d.summary ? ': ' + d.summary : ''}`)); break;
          case 'content':
            if (!content) out.append(content = h('pre', { class: 'content' }));
            content.textContent += d.content;
            break;
          case 'error': out.append(h('p', { class: 'error', role: 'alert' }, `Error${d.code ? ' (' + d.code + ')' : ''}: ${d.message}`)); break;
          default: break;
        }
      },
    });
  } finally {
    clearInterval(poll);
  }
  const x = await call('GET', `/executions/${id}`);
  const u = x.token_usage || {};
  summary.replaceChildren(h('dl', { class: 'kv' },
    h('dt', {}, 'Execution'), h('dd', {}, link),
    h('dt', {}, 'Status'), h('dd', { id: `run-status${suffix}` }, badge(x.status)),
    h('dt', {}, 'Tokens'), h('dd', { id: `run-tokens${suffix}` }, `${u.total_tokens ?? 0} (${u.prompt_tokens ?? 0} prompt, ${u.completion_tokens ?? 0} completion)`),
    h('dt', {}, 'Cost'), h('dd', { id: `run-cost${suffix}` }, cost(x.cost)),
    h('dt', {}, 'Duration'), h('dd', {}, x.duration_ms != null ? `${x.duration_ms} ms` : '—'),
    h('dt', {}, 'Trace'), h('dd', {}, x.trace_id || '—')));
  if (!content && x.output) out.append(h('pre', { class: 'content' }, json(x.output)));
}

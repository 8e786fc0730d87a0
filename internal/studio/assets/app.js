// Studio: a small single-page app over the public API. Pages are hash routes (#/agents…),
// each rendered by a function that fetches what it shows; no framework, no build step.
import { APIError, call, onUnauthorized, session, stream } from './api.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const statusBox = document.getElementById('status');
let mode = 'server';

// --- DOM helpers -------------------------------------------------------------------------

/** Builds an element: attributes (on* are listeners, value sets the property) and children. */
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of kids.flat(Infinity)) {
    if (c != null && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

let uid = 0;
/** A labelled form control; the control gets an id if it has none. */
function field(label, control, hint) {
  if (!control.id) control.id = 'f' + ++uid;
  const kids = [h('label', { for: control.id }, label), control];
  if (hint) {
    const hid = control.id + '-hint';
    control.setAttribute('aria-describedby', hid);
    kids.push(h('div', { id: hid, class: 'muted' }, hint));
  }
  return h('div', {}, kids);
}

function toast(msg, isError) {
  statusBox.textContent = msg;
  statusBox.className = 'toast' + (isError ? ' error' : '');
  statusBox.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { statusBox.hidden = true; }, 4000);
}

const json = (v) => JSON.stringify(v ?? null, null, 2);
const when = (t) => (t ? new Date(t).toLocaleString() : '—');
const cost = (c) => '$' + Number(c || 0).toFixed(6);
const badge = (s) => h('span', { class: 'badge s-' + s }, s.replace('_', ' '));

function parseJSON(text, what) {
  try { return JSON.parse(text); } catch (e) { throw new Error(`${what} is not valid JSON: ${e.message}`); }
}

/** Runs fn for a button press: disables the button meanwhile and reports errors. */
async function act(button, fn) {
  if (button) button.disabled = true;
  try {
    await fn();
  } catch (e) {
    if (e.name !== 'AbortError') toast(e.message, true); // aborted: the user left the page
  } finally {
    if (button && button.isConnected) button.disabled = false;
  }
}

function pager(p, go) {
  if (!p || p.total_pages <= 1) return h('p', { class: 'muted' }, `${p?.total ?? 0} in all`);
  return h('div', { class: 'row', role: 'navigation', 'aria-label': 'Pages' },
    h('button', { type: 'button', disabled: p.page <= 1, onclick: () => go(p.page - 1) }, 'Previous'),
    h('span', {}, `Page ${p.page} of ${p.total_pages} (${p.total} in all)`),
    h('button', { type: 'button', disabled: p.page >= p.total_pages, onclick: () => go(p.page + 1) }, 'Next'));
}

function render(title, ...kids) {
  document.title = `${title} · agentplane Studio`;
  main.replaceChildren(h('h1', {}, title), ...kids.flat(Infinity).filter((k) => k != null && k !== false));
}

// --- routing -----------------------------------------------------------------------------

const routes = [
  [/^\/agents$/, agentsPage],
  [/^\/agents\/new$/, newAgentPage],
  [/^\/agents\/([^/]+)$/, agentPage],
  [/^\/executions$/, executionsPage],
  [/^\/executions\/([^/]+)$/, executionPage],
  [/^\/approvals$/, approvalsPage],
  [/^\/chat$/, chatPage],
  [/^\/chat\/([^/]+)$/, chatSessionPage],
  [/^\/keys$/, keysPage],
  [/^\/prompts$/, promptsPage],
  [/^\/credentials$/, credentialsPage],
  [/^\/mcp-tools$/, mcpToolsPage],
  [/^\/prompts\/([^/]+)$/, promptPage],
];

let pageAbort = new AbortController();

async function route() {
  pageAbort.abort();
  pageAbort = new AbortController();
  const [path, query] = (location.hash.slice(1) || '/agents').split('?');
  const params = new URLSearchParams(query || '');
  if (mode === 'server' && !session.get()?.workspace && !session.get()?.key) {
    return signInPage();
  }
  renderChrome();
  for (const a of nav.querySelectorAll('a')) {
    if (path.startsWith(a.getAttribute('href').slice(1))) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const hit = routes.find(([re]) => re.test(path));
  if (!hit) return render('Not found', h('p', {}, 'No such page. ', h('a', { href: '#/agents' }, 'Go to agents')));
  main.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    await hit[1](...path.match(hit[0]).slice(1).map(decodeURIComponent), params, pageAbort.signal);
  } catch (e) {
    if (e.name === 'AbortError') return;
    render('Something went wrong', h('p', { role: 'alert', class: 'error' }, e.message));
  }
  main.focus({ preventScroll: true });
}

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function renderChrome() {
  nav.hidden = false;
  const s = session.get();
  if (mode === 'emulator') {
    who.replaceChildren(h('span', {}, 'Emulator: no sign-in'));
    return;
  }
  const label = s?.key ? `API key ${s.key.slice(0, 11)}…` : `${s?.email} · ${s?.workspaceName || s?.workspace}`;
  who.replaceChildren(h('span', {}, label), h('button', { type: 'button', id: 'signout', onclick: signOut }, 'Sign out'));
}

function signOut() {
  session.clear();
  nav.hidden = true;
  who.replaceChildren();
  go('#/agents');
}

// --- sign in (serve only) ----------------------------------------------------------------

function signInPage(message) {
  nav.hidden = true;
  who.replaceChildren();
  const email = h('input', { id: 'login-email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'login-password', type: 'password', autocomplete: 'current-password', required: true });
  const key = h('input', { id: 'login-key', type: 'password', autocomplete: 'off', required: true, placeholder: 'ap_…' });
  const err = h('p', { role: 'alert', class: 'error', id: 'signin-error' }, message || '');
  const byPassword = h('form', {
    'aria-labelledby': 'signin-user',
    onsubmit: (ev) => {
      ev.preventDefault();
      act(ev.submitter, async () => {
        err.textContent = '';
        try {
          const t = await call('POST', '/auth/login', { email: email.value, password: password.value }, { quiet401: true });
          session.set({ token: t.token, email: t.user.email });
          pickWorkspace(t.workspaces);
        } catch (e) {
          err.textContent = e.message;
        }
      });
    },
  }, h('h2', { id: 'signin-user' }, 'Email and password'), field('Email', email), field('Password', password),
  h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'login-submit' }, 'Sign in')));
  const byKey = h('form', {
    'aria-labelledby': 'signin-key',
    onsubmit: (ev) => {
      ev.preventDefault();
      act(ev.submitter, async () => {
        err.textContent = '';
        session.set({ key: key.value.trim() });
        try {
          await call('GET', '/agents?limit=1', undefined, { quiet401: true });
        } catch (e) {
          if (e.status === 401) {
            session.clear();
            err.textContent = e.message;
            return;
          }
        }
        go('#/agents');
      });
    },
  }, h('h2', { id: 'signin-key' }, 'Or an API key'), field('API key', key, 'Kept in this tab only (sessionStorage).'),
  h('div', { class: 'row' }, h('button', { type: 'submit', id: 'key-submit' }, 'Use this key')));
  render('Sign in to Studio', h('div', { class: 'signin' }, err, byPassword, byKey));
  email.focus();
}

function pickWorkspace(list) {
  const s = session.get();
  const choose = (w) => {
    session.set({ ...s, workspace: w.id, workspaceName: w.name });
    go('#/agents');
  };
  if (list.length === 1) return choose(list[0]);
  if (!list.length) {
    session.clear();
    return signInPage('You are not a member of any workspace; ask an owner to add you.');
  }
  const sel = h('select', { id: 'workspace' }, list.map((w) => h('option', { value: w.id }, `${w.name} (${w.role})`)));
  render('Choose a workspace', h('form', {
    onsubmit: (ev) => { ev.preventDefault(); choose(list.find((w) => w.id === sel.value)); },
  }, field('Workspace', sel), h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Continue'))));
  sel.focus();
}

// --- agents ------------------------------------------------------------------------------

const AGENT_TYPES = ['simple', 'agent', 'chain', 'workflow', 'multi_agent', 'approval'];

async function agentsPage(params) {
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

function newAgentPage() {
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

async function agentPage(id) {
  const [agent, versions] = await Promise.all([
    call('GET', `/agents/${id}`),
    call('GET', `/agents/${id}/versions?limit=100`),
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
  const activate = h('input', { type: 'checkbox', id: 'version-activate', checked: true });
  const saveVersion = h('form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      act(ev.submitter, async () => {
        const v = await call('POST', `/agents/${id}/versions`, { config: parseJSON(config.value, 'The configuration'), notes: notes.value });
        if (activate.checked) await call('POST', `/agents/${id}/versions/${v.id}/promote`);
        toast(`Version ${v.version} saved${activate.checked ? ' and active' : ''}`);
        route();
      });
    },
  }, field('Configuration (JSON): the draft', config, 'Edit, then run it in the playground below or save it as a version.'),
  h('div', { class: 'row' }, field('Version notes', notes),
    h('div', {}, h('label', { for: 'version-activate' }, activate, ' Make it active')),
    h('button', { type: 'submit', id: 'save-version' }, 'Save as new version')));

  const diffOut = h('pre', { id: 'diff', hidden: true, 'aria-live': 'polite' });
  const versionRows = versions.map((v) => h('tr', {},
    h('td', {}, `v${v.version}`), h('td', {}, v.is_active ? h('strong', {}, 'active') : ''),
    h('td', {}, v.notes || '—'), h('td', {}, when(v.created_at)),
    h('td', {}, h('div', { class: 'row' },
      v.is_active ? null : h('button', { type: 'button', onclick: (ev) => act(ev.currentTarget, async () => {
        await call('POST', `/agents/${id}/versions/${v.id}/promote`);
        toast(`v${v.version} is now active`);
        route();
      }) }, `Promote v${v.version}`),
      h('button', { type: 'button', onclick: () => { config.value = json(v.config); config.focus(); } }, 'Load into draft'),
      h('button', { type: 'button', onclick: () => {
        diffOut.hidden = false;
        diffOut.textContent = `Draft → v${v.version}\n` + lineDiff(config.value, json(v.config));
      } }, 'Diff with draft')))));

  render(agent.name,
    h('p', { class: 'muted' }, `${agent.type} · ${agent.status} · `, h('a', { href: `#/executions?agent_id=${id}` }, 'executions')),
    details,
    h('div', { class: 'cols' },
      h('section', { 'aria-labelledby': 'h-config' }, h('h2', { id: 'h-config' }, 'Configuration'), saveVersion),
      h('section', { 'aria-labelledby': 'h-play' }, h('h2', { id: 'h-play' }, 'Playground'), playground(agent, versions, config))),
    schemaEditor(agent, config),
    h('section', { 'aria-labelledby': 'h-versions' }, h('h2', { id: 'h-versions' }, 'Versions'),
      h('table', {}, h('thead', {}, h('tr', {}, ['Version', '', 'Notes', 'Created', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, versionRows)), diffOut));
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
  const which = h('select', { id: 'run-version' },
    h('option', { value: 'draft' }, 'Draft (the configuration, unsaved)'),
    agent.active_version_id ? h('option', { value: 'active', selected: true }, `Active version (v${agent.active_version})`) : null,
    versions.map((v) => h('option', { value: v.id }, `v${v.version}`)));
  const input = h('textarea', { id: 'run-input', spellcheck: 'false', value: json({ message: 'Hello!' }) });
  const out = h('div', { id: 'run-output', class: 'stream', 'aria-live': 'polite' });
  const summary = h('div', { id: 'run-summary' });
  const run = h('button', { class: 'primary', type: 'submit', id: 'run' }, 'Run');
  const form = h('form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      act(run, async () => {
        out.replaceChildren();
        summary.replaceChildren(h('p', { class: 'muted' }, 'Starting…'));
        const body = { input: parseJSON(input.value, 'The input'), async: true, source: 'studio' };
        let x;
        if (which.value === 'draft') {
          x = await call('POST', `/agents/${agent.id}/playground`, { ...body, config: parseJSON(config.value, 'The configuration') });
        } else {
          if (which.value !== 'active') body.version_id = which.value;
          x = await call('POST', `/agents/${agent.id}/execute`, body);
        }
        await watchRun(x.id, out, summary);
      });
    },
  }, field('Run', which), field('Input (JSON)', input), h('div', { class: 'row' }, run));
  return h('div', {}, form, h('h3', {}, 'Output'), out, summary);
}

/** Streams a run's frames into out, then shows its status, tokens and cost in summary. */
async function watchRun(id, out, summary, status = 'pending') {
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
    h('dt', {}, 'Status'), h('dd', { id: 'run-status' }, badge(x.status)),
    h('dt', {}, 'Tokens'), h('dd', { id: 'run-tokens' }, `${u.total_tokens ?? 0} (${u.prompt_tokens ?? 0} prompt, ${u.completion_tokens ?? 0} completion)`),
    h('dt', {}, 'Cost'), h('dd', { id: 'run-cost' }, cost(x.cost)),
    h('dt', {}, 'Duration'), h('dd', {}, x.duration_ms != null ? `${x.duration_ms} ms` : '—'),
    h('dt', {}, 'Trace'), h('dd', {}, x.trace_id || '—')));
  if (!content && x.output) out.append(h('pre', { class: 'content' }, json(x.output)));
}

// --- executions --------------------------------------------------------------------------

const STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled', 'awaiting_approval', 'rejected'];
const SOURCES = ['api', 'studio', 'playground', 'chat', 'webhook', 'schedule', 'slack', 'telegram', 'teams', 'whatsapp'];

async function agentNames() {
  const list = await call('GET', '/agents?limit=100');
  return new Map(list.map((a) => [a.id, a.name]));
}

async function executionsPage(params) {
  const page = Number(params.get('page') || 1);
  const filters = ['agent_id', 'status', 'source'].filter((k) => params.get(k)).map((k) => `&${k}=${encodeURIComponent(params.get(k))}`).join('');
  const [res, names] = await Promise.all([call('GET', `/executions?page=${page}&limit=25${filters}`, undefined, { full: true }), agentNames()]);
  const pick = (id, values, current, labels) => h('select', { id, name: id },
    h('option', { value: '' }, 'any'), values.map((v, i) => h('option', { value: v, selected: v === current }, labels ? labels[i] : v)));
  const agentSel = pick('f-agent', [...names.keys()], params.get('agent_id'), [...names.values()]);
  const statusSel = pick('f-status', STATUSES, params.get('status'));
  const sourceSel = pick('f-source', SOURCES, params.get('source'));
  const query = (p) => {
    const q = new URLSearchParams();
    if (agentSel.value) q.set('agent_id', agentSel.value);
    if (statusSel.value) q.set('status', statusSel.value);
    if (sourceSel.value) q.set('source', sourceSel.value);
    if (p > 1) q.set('page', p);
    return '#/executions?' + q;
  };
  render('Executions',
    h('form', { class: 'row', onsubmit: (ev) => { ev.preventDefault(); go(query(1)); } },
      field('Agent', agentSel), field('Status', statusSel), field('Source', sourceSel), h('button', { type: 'submit' }, 'Filter')),
    res.data.length
      ? h('table', {}, h('thead', {}, h('tr', {}, ['Execution', 'Agent', 'Status', 'Source', 'Created', 'Duration', 'Tokens', 'Cost'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, res.data.map((x) => h('tr', {},
          h('td', {}, h('a', { href: `#/executions/${x.id}` }, x.id)), h('td', {}, names.get(x.agent_id) || x.agent_id),
          h('td', {}, badge(x.status)), h('td', {}, x.source), h('td', {}, when(x.created_at)),
          h('td', {}, x.duration_ms != null ? `${x.duration_ms} ms` : '—'), h('td', {}, x.token_usage?.total_tokens ?? 0), h('td', {}, cost(x.cost))))))
      : h('p', { class: 'muted' }, 'No executions match.'),
    pager(res.pagination, (p) => go(query(p))));
}

/** The trace's spans as a waterfall: one bar per span, placed on the trace's time line. */
function waterfall(trace) {
  const spans = trace.spans || [];
  if (!spans.length) return h('p', { class: 'muted' }, 'No spans.');
  const t0 = Math.min(...spans.map((s) => Date.parse(s.started_at)));
  const end = (s) => (s.ended_at ? Date.parse(s.ended_at) : Date.parse(s.started_at) + (s.duration_ms || 0));
  const total = Math.max(1, Math.max(...spans.map(end)) - t0);
  const depth = new Map();
  const level = (s) => {
    if (depth.has(s.id)) return depth.get(s.id);
    const parent = spans.find((p) => p.id === s.parent_id);
    const d = parent && parent !== s ? Math.min(level(parent) + 1, 8) : 0;
    depth.set(s.id, d);
    return d;
  };
  return h('table', { class: 'waterfall', id: 'waterfall' },
    h('thead', {}, h('tr', {}, ['Span', 'Kind', 'Duration', 'Tokens', 'Timeline'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, spans.map((s) => {
      const bar = h('div', { class: 'bar' + (s.status === 'error' ? ' bad' : ''), title: `${s.name}: ${s.duration_ms ?? 0} ms` });
      bar.style.marginLeft = `${((Date.parse(s.started_at) - t0) / total) * 100}%`;
      bar.style.width = `${Math.max(0.5, ((end(s) - Date.parse(s.started_at)) / total) * 100)}%`;
      const name = h('td', {}, s.name);
      name.style.paddingLeft = `${0.5 + level(s)}rem`;
      return h('tr', {}, name, h('td', {}, s.kind), h('td', {}, `${s.duration_ms ?? 0} ms`),
        h('td', {}, s.token_usage?.total_tokens || ''), h('td', { class: 'track' }, bar));
    })));
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

async function executionPage(id) {
  const x = await call('GET', `/executions/${id}`);
  const [tree, trace, scores] = await Promise.all([
    call('GET', `/executions/${id}/tree`).catch((e) => e),
    x.trace_id ? call('GET', `/traces/${x.trace_id}`).catch((e) => e) : null,
    call('GET', `/scores?execution_id=${encodeURIComponent(id)}&limit=100`).catch((e) => e),
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
      h('dt', {}, 'Agent'), h('dd', {}, h('a', { href: `#/agents/${x.agent_id}` }, x.agent_id)),
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
    trace instanceof Error ? h('p', { class: 'muted' }, `The trace is not available: ${trace.message}`) : trace ? waterfall(trace) : h('p', { class: 'muted' }, 'No trace.'),
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

async function approvalsPage() {
  const list = await call('GET', '/approvals?limit=50');
  render('Approvals inbox', list.length ? list.map((a) => {
    const comment = h('textarea', { id: `comment-${a.id}`, maxlength: 2000 });
    const decide = (verb) => (ev) => act(ev.currentTarget, async () => {
      await call('POST', `/executions/${a.execution_id}/${verb}`, verb === 'approve' ? { comment: comment.value } : { reason: comment.value });
      toast(verb === 'approve' ? 'Approved: the run continues' : 'Denied: the run ends rejected');
      route();
    });
    return h('section', { class: 'card approval', 'aria-label': `${a.agent_name}: ${a.checkpoint}` },
      h('h2', {}, `${a.agent_name} · ${a.checkpoint}`),
      h('p', { class: 'muted' }, `Requested ${when(a.requested_at)} · execution `, h('a', { href: `#/executions/${a.execution_id}` }, a.execution_id)),
      a.description ? h('p', {}, a.description) : null,
      h('pre', {}, json(a.awaiting)),
      field('Comment (sent as the reason when denying)', comment),
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'primary approve', onclick: decide('approve') }, 'Approve'),
        h('button', { type: 'button', class: 'danger deny', onclick: decide('deny') }, 'Deny')));
  }) : h('p', { class: 'muted', id: 'inbox-empty' }, 'Nothing is waiting for a decision.'));
}

// --- chat --------------------------------------------------------------------------------

async function chatPage() {
  const [sessions, names] = await Promise.all([call('GET', '/chat/sessions?limit=50'), agentNames()]);
  const agentSel = h('select', { id: 'chat-agent', required: true }, [...names].map(([id, n]) => h('option', { value: id }, n)));
  const title = h('input', { id: 'chat-title' });
  render('Chat',
    h('form', {
      class: 'row',
      onsubmit: (ev) => {
        ev.preventDefault();
        act(ev.submitter, async () => {
          const s = await call('POST', '/chat/sessions', { agent_id: agentSel.value, title: title.value || undefined });
          go(`#/chat/${s.id}`);
        });
      },
    }, field('Agent', agentSel), field('Title', title), h('button', { class: 'primary', type: 'submit', id: 'chat-new' }, 'New session')),
    h('h2', {}, 'Sessions'),
    sessions.length ? h('ul', {}, sessions.map((s) => h('li', {},
      h('a', { href: `#/chat/${s.id}` }, s.title || s.id), h('span', { class: 'muted' }, ` · ${names.get(s.agent_id) || s.agent_id} · ${when(s.created_at)}`))))
      : h('p', { class: 'muted' }, 'No sessions yet.'));
}

async function chatSessionPage(id) {
  const [s, msgs] = await Promise.all([call('GET', `/chat/sessions/${id}`), call('GET', `/chat/sessions/${id}/messages?limit=100`)]);
  const log = h('div', { class: 'msgs', id: 'chat-log', role: 'log', 'aria-live': 'polite' },
    msgs.map((m) => h('div', { class: `msg ${m.role}` }, m.content)));
  const text = h('textarea', { id: 'chat-input', required: true, rows: 3 });
  const send = h('button', { class: 'primary', type: 'submit', id: 'chat-send' }, 'Send');
  render(s.title || 'Chat session',
    h('p', { class: 'muted' }, 'With agent ', h('a', { href: `#/agents/${s.agent_id}` }, s.agent_id)),
    log,
    h('form', {
      onsubmit: (ev) => {
        ev.preventDefault();
        const content = text.value.trim();
        if (!content) return;
        act(send, async () => {
          log.append(h('div', { class: 'msg user' }, content));
          const reply = h('div', { class: 'msg assistant' });
          log.append(reply);
          text.value = '';
          const end = await stream('POST', `/chat/sessions/${id}/messages/stream`, {
            body: { content },
            signal: pageAbort.signal,
            onEvent(name, d) {
              if (name === 'content') reply.textContent += d.content;
              log.scrollTop = log.scrollHeight;
            },
          });
          if (end?.event === 'error') reply.append(h('span', { class: 'error' }, ` [${end.data.message}]`));
          text.focus();
        });
      },
    }, field('Message', text), h('div', { class: 'row' }, send)));
  text.focus();
}

// --- prompts -----------------------------------------------------------------------------

async function promptsPage(params) {
  const page = Number(params.get('page') || 1);
  const res = await call('GET', `/prompts?page=${page}&limit=20`, undefined, { full: true });
  const name = h('input', { id: 'prompt-name', required: true, maxlength: 200 });
  const template = h('textarea', { id: 'prompt-template', required: true, value: 'Hello {{name}}!' });
  render('Prompts',
    res.data.length
      ? h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Active version', 'Variables', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, res.data.map((p) => h('tr', {},
          h('td', {}, h('a', { href: `#/prompts/${p.id}` }, p.name)), h('td', {}, p.active_version ? `v${p.active_version}` : '—'),
          h('td', {}, (p.variables || []).join(', ')), h('td', {}, when(p.updated_at))))))
      : h('p', { class: 'muted' }, 'No prompts yet.'),
    pager(res.pagination, (n) => go(`#/prompts?page=${n}`)),
    h('h2', {}, 'New prompt'),
    h('form', {
      onsubmit: (ev) => {
        ev.preventDefault();
        act(ev.submitter, async () => {
          const p = await call('POST', '/prompts', { name: name.value, template: template.value });
          go(`#/prompts/${p.id}`);
        });
      },
    }, field('Name', name), field('Template (Mustache)', template), h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'prompt-create' }, 'Create prompt'))));
}

async function promptPage(id) {
  const [p, versions] = await Promise.all([call('GET', `/prompts/${id}`), call('GET', `/prompts/${id}/versions?limit=100`)]);
  const template = h('textarea', { id: 'prompt-draft', class: 'config', value: p.template });
  const notes = h('input', { id: 'prompt-notes' });
  const which = h('select', { id: 'preview-version' }, versions.map((v) => h('option', { value: v.id, selected: v.is_active }, `v${v.version}${v.is_active ? ' (active)' : ''}`)));
  const vars = h('textarea', { id: 'preview-vars', value: json(Object.fromEntries((p.variables || []).map((n) => [n, '']))) });
  const rendered = h('pre', { id: 'preview-out', 'aria-live': 'polite' });
  render(p.name,
    h('section', { 'aria-labelledby': 'h-preview' }, h('h2', { id: 'h-preview' }, 'Preview'),
      h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            const r = await call('POST', `/prompts/${id}/preview`, { version_id: which.value, variables: parseJSON(vars.value, 'The variables') });
            rendered.textContent = r.rendered + (r.missing?.length ? `\n\n(missing: ${r.missing.join(', ')})` : '');
          });
        },
      }, field('Version', which), field('Variables (JSON)', vars), h('div', { class: 'row' }, h('button', { type: 'submit', id: 'preview' }, 'Preview'))),
      rendered),
    h('section', { 'aria-labelledby': 'h-pversion' }, h('h2', { id: 'h-pversion' }, 'New version'),
      h('form', {
        onsubmit: (ev) => {
          ev.preventDefault();
          act(ev.submitter, async () => {
            const v = await call('POST', `/prompts/${id}/versions`, { template: template.value, notes: notes.value });
            toast(`Version ${v.version} saved`);
            route();
          });
        },
      }, field('Template (Mustache)', template), field('Notes', notes), h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Save as new version')))),
    h('h2', {}, 'Versions'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Version', '', 'Variables', 'Notes', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, versions.map((v) => h('tr', {},
        h('td', {}, `v${v.version}`), h('td', {}, v.is_active ? h('strong', {}, 'active') : ''), h('td', {}, (v.variables || []).join(', ')),
        h('td', {}, v.notes || '—'), h('td', {}, when(v.created_at)),
        h('td', {}, v.is_active ? null : h('button', { type: 'button', onclick: (ev) => act(ev.currentTarget, async () => {
          await call('POST', `/prompts/${id}/versions/${v.id}/promote`);
          toast(`v${v.version} is now active`);
          route();
        }) }, `Promote v${v.version}`)))))));
}

// --- credentials and MCP tools ---------------------------------------------------------

const CREDENTIAL_TYPES = ['api_key', 'bearer_token', 'basic_auth', 'database_url', 'oauth2'];

async function credentialsPage(params) {
  const page = Number(params.get('page') || 1);
  const res = await call('GET', `/credentials?page=${page}&limit=50`, undefined, { full: true });
  const name = h('input', { id: 'cred-name', required: true, maxlength: 200 });
  const type = h('select', { id: 'cred-type' }, CREDENTIAL_TYPES.map((t) => h('option', { value: t }, t)));
  const provider = h('input', { id: 'cred-provider', placeholder: 'openai, anthropic, postgres…' });
  const value = h('input', { id: 'cred-value', type: 'password', autocomplete: 'off', required: true });
  const validity = (c) => (c.valid == null ? 'not checked' : c.valid ? 'valid' : `invalid: ${c.validation_message}`);
  render('Credentials',
    h('p', { class: 'muted' }, 'Values are encrypted at rest and only ever shown masked.'),
    res.data.length
      ? h('table', { id: 'credentials' }, h('thead', {}, h('tr', {}, ['Name', 'Type', 'Provider', 'Value', 'Validation', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, res.data.map((c) => h('tr', { 'data-credential': c.name },
          h('td', {}, c.name), h('td', {}, c.type), h('td', {}, c.provider || '—'), h('td', {}, h('code', {}, c.masked_value)),
          h('td', {}, validity(c), c.last_validated_at ? h('span', { class: 'muted' }, ` (${when(c.last_validated_at)})`) : null),
          h('td', {}, h('button', { type: 'button', onclick: (ev) => act(ev.currentTarget, async () => {
            const v = await call('POST', `/credentials/${c.id}/validate`);
            toast(v?.valid ? `${c.name} is valid` : `${c.name} was not accepted`, !v?.valid);
            route();
          }) }, `Validate ${c.name}`))))))
      : h('p', { class: 'muted' }, 'No credentials.'),
    pager(res.pagination, (n) => go(`#/credentials?page=${n}`)),
    h('h2', {}, 'New credential'),
    h('form', {
      onsubmit: (ev) => {
        ev.preventDefault();
        act(ev.submitter, async () => {
          await call('POST', '/credentials', { name: name.value, type: type.value, provider: provider.value || undefined, value: value.value });
          value.value = '';
          toast('Credential saved');
          route();
        });
      },
    }, h('div', { class: 'row' }, field('Name', name), field('Type', type), field('Provider', provider), field('Value', value)),
    h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'cred-create' }, 'Save credential'))));
}

async function mcpToolsPage() {
  const list = await call('GET', '/mcp-tools?limit=100');
  render('MCP tools', list.length ? list.map((m) => h('section', { class: 'card', 'aria-label': m.name },
    h('h2', {}, m.name, ' ', h('span', { class: 'badge' }, m.transport), m.enabled ? null : h('span', { class: 'badge' }, 'disabled')),
    h('p', { class: 'muted' }, m.url || [m.command, ...(m.args || [])].join(' '),
      ` · refreshed ${when(m.refreshed_at)}`),
    m.last_error ? h('p', { class: 'error' }, `Last refresh failed: ${m.last_error}`) : null,
    (m.tools || []).length
      ? h('ul', {}, m.tools.map((t) => h('li', {}, h('strong', {}, t.name), t.description ? ` — ${t.description}` : '')))
      : h('p', { class: 'muted' }, 'No tools listed yet.'),
    h('button', { type: 'button', onclick: (ev) => act(ev.currentTarget, async () => {
      await call('POST', `/mcp-tools/${m.id}/refresh`);
      toast(`${m.name} refreshed`);
      route();
    }) }, `Refresh ${m.name}`))) : h('p', { class: 'muted' }, 'No MCP servers registered (POST /api/v1/mcp-tools).'));
}

// --- API keys ----------------------------------------------------------------------------

async function keysPage() {
  const keys = await call('GET', '/api-keys?limit=100');
  const secretBox = h('div', { id: 'new-key' });
  const showSecret = (k, verb) => {
    const done = h('button', { type: 'button', id: 'key-done', onclick: () => { secretBox.replaceChildren(); route(); } }, 'I have copied it');
    secretBox.replaceChildren(h('div', { class: 'card', role: 'alert' },
      h('p', {}, h('strong', {}, `Key ${k.name} ${verb}.`), ' Copy it now: it is shown only this once.'),
      h('output', { class: 'secret', id: 'new-key-value' }, k.key),
      h('div', { class: 'row' }, done)));
    done.focus();
  };
  const name = h('input', { id: 'key-name', required: true, maxlength: 200 });
  const scopes = h('input', { id: 'key-scopes', value: '*' });
  const rows = keys.map((k) => {
    const revoke = h('button', { type: 'button', class: 'danger revoke', 'data-key': k.name }, 'Revoke');
    revoke.addEventListener('click', (ev) => {
      if (revoke.dataset.armed !== '1') {
        revoke.dataset.armed = '1';
        revoke.textContent = `Confirm: revoke ${k.name}`;
        return;
      }
      act(ev.currentTarget, async () => {
        await call('DELETE', `/api-keys/${k.id}`);
        toast(`Key ${k.name} revoked`);
        route();
      });
    });
    return h('tr', { 'data-key': k.name },
      h('td', {}, k.name), h('td', {}, h('code', {}, k.key_prefix + '…')), h('td', {}, k.scopes.join(' ')),
      h('td', {}, when(k.created_at)), h('td', {}, when(k.last_used_at)),
      h('td', {}, h('div', { class: 'row' },
        h('button', { type: 'button', class: 'rotate', onclick: (ev) => act(ev.currentTarget, async () => {
          showSecret(await call('POST', `/api-keys/${k.id}/rotate`), 'rotated');
        }) }, 'Rotate'), revoke)));
  });
  render('API keys',
    secretBox,
    h('form', {
      class: 'row',
      onsubmit: (ev) => {
        ev.preventDefault();
        act(ev.submitter, async () => {
          const list = scopes.value.split(/[\s,]+/).filter(Boolean);
          showSecret(await call('POST', '/api-keys', { name: name.value, scopes: list }), 'created');
        });
      },
    }, field('Name', name), field('Scopes', scopes, 'Space- or comma-separated; * grants all.'),
    h('button', { class: 'primary', type: 'submit', id: 'key-create' }, 'Create key')),
    keys.length ? h('table', { id: 'keys' }, h('thead', {}, h('tr', {}, ['Name', 'Prefix', 'Scopes', 'Created', 'Last used', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows)) : h('p', { class: 'muted' }, 'No keys.'));
}

// --- start -------------------------------------------------------------------------------

onUnauthorized(() => {
  if (mode !== 'server') return;
  session.clear();
  signInPage('Your session ended or the key is no longer valid; sign in again.');
});

async function start() {
  try {
    const health = await call('GET', '//health');
    mode = health.mode === 'emulator' ? 'emulator' : 'server';
  } catch (e) {
    render('Studio cannot reach the server', h('p', { role: 'alert', class: 'error' }, e instanceof APIError ? e.message : String(e)));
    return;
  }
  document.body.dataset.mode = mode;
  window.addEventListener('hashchange', route);
  await route();
  document.body.dataset.ready = String(Math.round(performance.now())); // ms from navigation to the first page
}

start();

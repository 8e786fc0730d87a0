// Studio's agent configuration editor: the draft configuration as forms (model picker with
// which credential serves each model, parameters, a prompt editor with {{ variable }}
// highlighting and a live preview rendered by the server, MCP tools, memory and data
// sources), over the same JSON draft that stays one click away.
import { APIError, call, callAll } from './api.js';
import { field, h, json } from './ui.js';

/** What the editor offers: models, model credentials, MCP servers, data sources, and whether models are simulated. */
export async function editorChoices() {
  const [models, creds, mcp, sources, health] = await Promise.all([
    callAll('/llm-models').catch(() => []),
    callAll('/credentials').catch(() => []), // a key without credentials:read sees no credential
    callAll('/mcp-tools').catch(() => []),
    callAll('/data-sources').catch(() => []),
    call('GET', '//health').catch(() => ({})),
  ]);
  return { models, creds: creds.filter((c) => c.provider), mcp, sources, simulated: health.models === 'simulated' };
}

/** Whether a model can run here: [true|false, words]. */
export function servedBy(m, choices) {
  if (choices.simulated) return [true, 'simulated model'];
  const c = choices.creds.find((x) => x.provider === m.provider && x.valid !== false);
  return c ? [true, `credential ${c.name}`] : [false, `no ${m.provider} credential`];
}

/** The {{ variables }} of a Mustache template, each once, in order. */
export function templateVariables(text) {
  const seen = new Set();
  for (const m of String(text).matchAll(/{{\s*[#^/&{]?\s*([\w.]+)\s*}?}}/g)) seen.add(m[1]);
  return [...seen];
}

/** The template with each {{ tag }} in a highlighted span. */
function highlighted(text) {
  return String(text).split(/({{[^{}]*}?}})/).map((part, i) => (i % 2 ? h('mark', { class: 'var' }, part) : part));
}

/**
 * The editor of the draft held (as JSON) in the config textarea: forms by default, the raw
 * JSON on request. Every form change is written into the draft at once, keeping the fields
 * the forms do not show.
 */
export function configEditor(agent, config, choices) {
  const forms = h('div', { id: 'config-forms' });
  const rawBox = h('div', { id: 'config-raw', hidden: true }, field('Configuration (JSON): the draft', config,
    'Edit, then run it in the playground or save it as a version. Fields the forms do not show are kept.'));
  const err = h('p', { class: 'error', role: 'alert', id: 'config-error' });
  const toggle = h('button', { type: 'button', id: 'raw-toggle', 'aria-pressed': 'false', onclick: () => {
    const toRaw = rawBox.hidden;
    if (!toRaw) {
      try { JSON.parse(config.value); } catch (e) { err.textContent = `The JSON does not parse: ${e.message}`; return; }
      fill(forms, agent, config, choices);
    }
    err.textContent = '';
    rawBox.hidden = !toRaw;
    forms.hidden = toRaw;
    toggle.textContent = toRaw ? 'Edit as forms' : 'Edit as JSON';
    toggle.setAttribute('aria-pressed', String(toRaw));
  } }, 'Edit as JSON');
  fill(forms, agent, config, choices);
  config.addEventListener('reload', () => fill(forms, agent, config, choices)); // a version loaded into the draft
  return h('div', {}, h('div', { class: 'row' }, toggle), err, forms, rawBox);
}

function fill(box, agent, config, choices) {
  const read = () => { try { return JSON.parse(config.value) || {}; } catch { return {}; } };
  const cfg = read();
  const changed = []; // called after each change of the draft
  const write = (fn) => {
    const c = read();
    fn(c);
    config.value = json(c);
    for (const f of changed) f();
  };
  const setNum = (key) => (ev) => write((c) => {
    if (ev.target.value === '') delete c[key]; else c[key] = Number(ev.target.value);
  });
  box.replaceChildren(
    h('fieldset', {}, h('legend', {}, 'Model'), modelPicker(cfg, choices, write),
      h('div', { class: 'row' },
        field('Temperature', h('input', { id: 'cfg-temperature', type: 'number', min: 0, max: 2, step: 0.1, value: cfg.temperature ?? '', oninput: setNum('temperature') })),
        field('Max tokens', h('input', { id: 'cfg-max-tokens', type: 'number', min: 1, step: 1, value: cfg.max_tokens || '', oninput: setNum('max_tokens') })),
        field('Max iterations', h('input', { id: 'cfg-max-iterations', type: 'number', min: 1, step: 1, value: cfg.max_iterations || '', oninput: setNum('max_iterations') })),
        field('Retries', h('input', { id: 'cfg-max-retries', type: 'number', min: 0, max: 10, step: 1, value: cfg.max_retries ?? '', oninput: setNum('max_retries') })),
        field('Model timeout (ms)', h('input', { id: 'cfg-request-timeout', type: 'number', min: 1, step: 1, value: cfg.request_timeout_ms || '', oninput: setNum('request_timeout_ms') })))),
    promptEditor(agent, cfg, config, write, changed),
    toolsPicker(cfg, choices, write),
    memoryAndData(cfg, choices, write));
}

function modelPicker(cfg, choices, write) {
  const option = (m) => {
    const [ok, how] = servedBy(m, choices);
    return h('option', { value: m.id, selected: m.id === cfg.model, 'data-served': String(ok) }, `${m.id} · ${m.provider} · ${ok ? '✓' : '✗'} ${how}`);
  };
  const known = choices.models.some((m) => m.id === cfg.model);
  const select = h('select', { id: 'cfg-model' },
    !known && cfg.model ? h('option', { value: cfg.model, selected: true }, `${cfg.model} (not in the catalog)`) : null,
    h('optgroup', { label: 'Workspace models' }, choices.models.filter((m) => m.source === 'workspace').map(option)),
    h('optgroup', { label: 'Catalog' }, choices.models.filter((m) => m.source !== 'workspace').map(option)));
  const status = h('div', { id: 'model-serve', 'aria-live': 'polite' });
  const show = () => {
    const m = choices.models.find((x) => x.id === select.value);
    if (!m) return status.replaceChildren(h('span', { class: 'error' }, 'Not a model of the catalog or the workspace.'));
    const [ok, how] = servedBy(m, choices);
    status.replaceChildren(...[h('span', { class: ok ? 'ok' : 'error' }, ok ? `Served by the ${how}.` : `Cannot run: ${how}. `),
      ok ? null : h('a', { href: '#/credentials' }, 'Add one on the Credentials page'),
      h('span', { class: 'muted' }, ` $${m.input_price_per_million}/M input, $${m.output_price_per_million}/M output tokens; ${m.context_window.toLocaleString()} tokens of context.`)].filter(Boolean));
  };
  select.addEventListener('change', () => { write((c) => { c.model = select.value; }); show(); });
  show();
  const cred = h('select', { id: 'cfg-credential', onchange: (ev) => write((c) => {
    if (ev.target.value) c.credential_id = ev.target.value; else delete c.credential_id;
  }) }, h('option', { value: '' }, "The workspace's credential for the model's provider"),
  choices.creds.map((c) => h('option', { value: c.id, selected: c.id === cfg.credential_id }, `${c.name} (${c.provider})`)));
  return [h('div', { class: 'row' }, field('Model', select), field('Credential', cred)), status];
}

function promptEditor(agent, cfg, config, write, changed) {
  const text = h('textarea', { id: 'cfg-system-prompt', class: 'prompt', spellcheck: 'true', value: cfg.system_prompt || '' });
  // The highlight layer lies under the textarea, whose text is transparent (its caret and
  // selection are not): the marks show in place, as the user types, and scroll with it.
  const marked = h('pre', { id: 'prompt-highlight', class: 'highlight', 'aria-hidden': 'true' });
  const overlay = h('div', { class: 'prompt-overlay' }, marked, text);
  text.addEventListener('scroll', () => { marked.scrollTop = text.scrollTop; marked.scrollLeft = text.scrollLeft; });
  const vars = h('p', { id: 'prompt-vars', class: 'muted' });
  const sample = h('textarea', { id: 'prompt-sample', spellcheck: 'false', rows: 3, value: json({ message: 'Hello!' }) });
  const preview = h('div', { id: 'prompt-preview', 'aria-live': 'polite' });
  let timer, seq = 0;
  const refresh = () => {
    const v = templateVariables(text.value);
    // A trailing newline gets a space so the layer is as tall as the textarea's last line.
    marked.replaceChildren(...highlighted(text.value.endsWith('\n') ? text.value + ' ' : text.value));
    // The textarea grows with its text (no scrollbar to offset its wrapping from the layer's).
    text.style.height = 'auto';
    text.style.height = `${text.scrollHeight + 2}px`;
    marked.scrollTop = text.scrollTop;
    vars.textContent = v.length ? `Variables: ${v.join(', ')} (from the run's input)` : 'No variables: write {{ name }} to use a field of the input.';
    clearTimeout(timer);
    timer = setTimeout(render, 300);
  };
  // The server renders the draft as a run would (no model call), so the preview is exact.
  const render = async () => {
    // A preview timed before the page was left (another page, or signing out) is not sent.
    if (!preview.isConnected) return;
    const mine = ++seq;
    let input;
    try { input = JSON.parse(sample.value); } catch (e) { preview.replaceChildren(h('p', { class: 'error' }, `The sample input is not JSON: ${e.message}`)); return; }
    try {
      const p = await call('POST', `/agents/${agent.id}/preview`, { input, config: JSON.parse(config.value) });
      if (mine !== seq) return;
      preview.replaceChildren(...p.messages.map((m) => h('div', { class: `turn ${m.role}` }, h('div', { class: 'role' }, m.role), h('div', { class: 'content' }, m.content))),
        ...(p.missing?.length ? [h('p', { class: 'error' }, `Missing from the input: ${p.missing.join(', ')}`)] : []));
    } catch (e) {
      if (mine !== seq) return;
      if (!(e instanceof APIError) || e.status >= 500) throw e;
      preview.replaceChildren(h('p', { class: 'error' }, e.message));
    }
  };
  text.addEventListener('input', () => { write((c) => { if (text.value) c.system_prompt = text.value; else delete c.system_prompt; }); refresh(); });
  sample.addEventListener('input', refresh);
  changed.push(() => { clearTimeout(timer); timer = setTimeout(render, 300); });
  refresh();
  return h('fieldset', {}, h('legend', {}, 'Prompt'),
    h('div', { class: 'cols' },
      h('div', {}, field('System prompt (Mustache: {{ variable }} takes a field of the input)', overlay, undefined, text), vars),
      h('div', {}, field('Sample input (JSON)', sample), h('h4', {}, 'Live preview: what the model gets'), preview)));
}

function toolsPicker(cfg, choices, write) {
  if (!choices.mcp.length) return h('fieldset', {}, h('legend', {}, 'Tools'), h('p', { class: 'muted' }, 'No MCP servers yet: ', h('a', { href: '#/mcp-tools' }, 'register one'), '.'));
  const refs = new Map((cfg.tools || []).map((t) => (typeof t === 'string' ? [t, null] : [t.mcp_tool_id, t.names || null])));
  const boxes = choices.mcp.map((m) => {
    const names = (m.tools || []).map((t) => t.name);
    const chosen = refs.has(m.id) ? refs.get(m.id) || names : [];
    const server = h('input', { type: 'checkbox', id: `tool-${m.id}`, checked: refs.has(m.id), 'data-mcp': m.name });
    const tools = names.map((n) => h('input', { type: 'checkbox', id: `tool-${m.id}-${n}`, checked: chosen.includes(n), 'data-tool': n }));
    return { m, server, tools, names };
  });
  const save = () => write((c) => {
    const out = [];
    for (const { m, server, tools, names } of boxes) {
      if (!server.checked) continue;
      const picked = names.filter((_, i) => tools[i].checked);
      out.push(picked.length === names.length ? m.id : { mcp_tool_id: m.id, names: picked });
    }
    if (out.length) c.tools = out; else delete c.tools;
  });
  for (const b of boxes) {
    b.server.addEventListener('change', () => { for (const t of b.tools) t.checked = b.server.checked; save(); });
    for (const t of b.tools) {
      t.addEventListener('change', () => { b.server.checked = b.tools.some((x) => x.checked); save(); });
    }
  }
  return h('fieldset', { id: 'cfg-tools' }, h('legend', {}, 'Tools (MCP servers)'), boxes.map(({ m, server, tools, names }) => h('div', { class: 'tool-server' },
    h('label', { for: server.id }, server, ` ${m.name} `, h('span', { class: 'muted' }, `${names.length} tools`)),
    h('ul', { class: 'tool-list' }, names.map((n, i) => h('li', {}, h('label', { for: tools[i].id, class: 'plain' }, tools[i], ` ${n}`)))))));
}

function memoryAndData(cfg, choices, write) {
  const mem = cfg.memory || {};
  const enabled = h('input', { type: 'checkbox', id: 'cfg-memory', checked: !!mem.enabled });
  const scope = h('select', { id: 'cfg-memory-scope' }, ['agent', 'session', 'end_user'].map((s) => h('option', { value: s, selected: s === (mem.scope || 'agent') }, s)));
  const maxItems = h('input', { id: 'cfg-memory-max', type: 'number', min: 1, max: 100, step: 1, value: mem.max_items || '' });
  const saveMem = () => write((c) => {
    if (!enabled.checked) { delete c.memory; return; }
    c.memory = { enabled: true, scope: scope.value };
    if (maxItems.value) c.memory.max_items = Number(maxItems.value);
  });
  for (const el of [enabled, scope, maxItems]) el.addEventListener('change', saveMem);
  const picked = new Set(cfg.data_sources || []);
  const sources = choices.sources.map((d) => h('input', { type: 'checkbox', id: `ds-${d.id}`, checked: picked.has(d.id), 'data-source': d.name }));
  const saveData = () => write((c) => {
    const ids = choices.sources.filter((_, i) => sources[i].checked).map((d) => d.id);
    if (ids.length) c.data_sources = ids; else delete c.data_sources;
  });
  for (const s of sources) s.addEventListener('change', saveData);
  return h('div', { class: 'cols' },
    h('fieldset', {}, h('legend', {}, 'Memory'), h('label', { for: enabled.id, class: 'plain' }, enabled, ' Use long-term memories'),
      h('div', { class: 'row' }, field('Whose', scope), field('At most (memories in a prompt)', maxItems))),
    h('fieldset', {}, h('legend', {}, 'Data sources'), choices.sources.length
      ? h('ul', { class: 'tool-list' }, choices.sources.map((d, i) => h('li', {}, h('label', { for: sources[i].id, class: 'plain' }, sources[i], ` ${d.name} `, h('span', { class: 'muted' }, d.type || '')))))
      : h('p', { class: 'muted' }, 'No data sources in this workspace.')));
}

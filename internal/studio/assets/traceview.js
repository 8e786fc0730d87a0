// Studio's trace view: the waterfall of a trace's spans (a time bar per span on the trace's
// time line, the span tree folded and unfolded by its toggles) and the panel of the span
// picked, its input, output, attributes, events and assets rendered: JSON folded, text as
// markdown, images shown.
import { blob } from './api.js';
import { cost, h } from './ui.js';

/** The span tree (spans[].children) in depth-first order, each with its depth and parent. */
function flatten(roots) {
  const out = [];
  const walk = (s, d, parent) => {
    const row = { s, d, parent };
    out.push(row);
    for (const c of s.children || []) walk(c, d + 1, row);
  };
  for (const r of roots) walk(r, 0, null);
  return out;
}

const startOf = (s) => Date.parse(s.started_at);
const endOf = (s) => (s.ended_at ? Date.parse(s.ended_at) : startOf(s) + (s.duration_ms || 0));
const ms = (n) => (n >= 10000 ? `${(n / 1000).toFixed(1)} s` : n < 10 && n % 1 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`);

/**
 * The trace's waterfall and span panel. Rows are one per span (every span of the tree, not
 * only the roots); a row is picked by click or Enter, and the first is picked at first.
 */
export function traceView(trace) {
  const rows = flatten(trace.spans || []);
  if (!rows.length) return h('p', { class: 'muted' }, 'No spans.');
  const t0 = Math.min(...rows.map((r) => startOf(r.s)));
  const total = Math.max(1, Math.max(...rows.map((r) => endOf(r.s))) - t0);
  const panel = h('aside', { id: 'span-panel', class: 'span-panel', 'aria-label': 'Span details', 'aria-live': 'polite' });

  const visible = (r) => { for (let p = r.parent; p; p = p.parent) if (p.collapsed) return false; return true; };
  const refresh = () => { for (const r of rows) r.tr.hidden = !visible(r); };
  const select = (r) => {
    for (const o of rows) o.tr.setAttribute('aria-selected', String(o === r));
    spanPanel(panel, r.s, t0);
  };

  for (const r of rows) {
    const s = r.s;
    const kids = s.children?.length || 0;
    const toggle = kids
      ? h('button', { type: 'button', class: 'fold', 'aria-expanded': 'true', 'aria-label': `Fold ${s.name}`, onclick: (ev) => {
        ev.stopPropagation();
        r.collapsed = !r.collapsed;
        toggle.setAttribute('aria-expanded', String(!r.collapsed));
        toggle.textContent = r.collapsed ? '▸' : '▾';
        refresh();
      } }, '▾')
      : h('span', { class: 'fold' });
    const offset = startOf(s) - t0, dur = endOf(s) - startOf(s);
    const bar = h('div', { class: `bar k-${s.kind}` + (s.status === 'error' ? ' bad' : ''), title: `${s.name}: starts at ${ms(offset)}, ${ms(dur)}` });
    bar.style.marginLeft = `${(offset / total) * 100}%`;
    bar.style.width = `${Math.max(0.4, (dur / total) * 100)}%`;
    const name = h('td', { class: 'span-name' }, toggle, h('span', { class: `kind k-${s.kind}` }, s.kind), ' ', s.name,
      s.status === 'error' ? h('span', { class: 'error' }, ' ✕') : null);
    name.style.paddingLeft = `${0.3 + Math.min(r.d, 12) * 1.1}rem`;
    r.tr = h('tr', { 'data-span': s.id, 'data-depth': r.d, tabindex: 0, 'aria-selected': 'false',
      onclick: () => select(r), onkeydown: (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); select(r); } } },
    name, h('td', { class: 'num' }, ms(dur)), h('td', { class: 'num' }, s.token_usage?.total_tokens || ''), h('td', { class: 'track' }, bar));
  }
  const ticks = h('div', { class: 'ticks' }, [0, 0.5, 1].map((f) => {
    const tk = h('span', {}, ms(total * f));
    tk.style.left = `${f * 100}%`;
    return tk;
  }));
  const table = h('table', { class: 'waterfall', id: 'waterfall' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Span'), h('th', { scope: 'col' }, 'Duration'), h('th', { scope: 'col' }, 'Tokens'),
      h('th', { scope: 'col', class: 'track' }, ticks))),
    h('tbody', {}, rows.map((r) => r.tr)));
  select(rows[0]);
  return h('div', { class: 'trace-view' }, h('div', { class: 'wf-wrap' }, table), panel);
}

/** Fills the panel with one span: its numbers, then input, output, attributes, events and assets. */
function spanPanel(panel, s, t0) {
  const u = s.token_usage || {};
  const attrs = { ...(s.attributes || {}) };
  const events = attrs['otel.events'];
  const assets = attrs.assets;
  delete attrs['otel.events'];
  const kv = (k, v) => (v == null || v === '' ? null : [h('dt', {}, k), h('dd', {}, v)]);
  panel.replaceChildren(...[
    h('h3', { id: 'span-title' }, s.name),
    h('dl', { class: 'kv' },
      kv('Kind', s.kind), kv('Status', s.status), kv('Model', s.model), kv('Provider', s.provider),
      kv('Starts at', `+${ms(startOf(s) - t0)}`), kv('Duration', s.duration_ms != null ? ms(s.duration_ms) : 'running'),
      u.total_tokens ? kv('Tokens', `${u.total_tokens} (${u.prompt_tokens} prompt, ${u.completion_tokens} completion)`) : null,
      s.cost ? kv('Cost', cost(s.cost)) : null, kv('Service', s.service_name), kv('Span id', h('code', {}, s.id))),
    s.error ? [h('h4', {}, 'Error'), h('pre', { class: 'error', id: 'span-error' }, s.error)] : null,
    section('Input', 'span-input', s.input),
    section('Output', 'span-output', s.output),
    Object.keys(attrs).length ? [h('h4', {}, 'Attributes'), h('div', { id: 'span-attributes' }, folded(attrs, 0))] : null,
    Array.isArray(events) && events.length ? [h('h4', {}, 'Events'), h('ol', { id: 'span-events', class: 'events' }, events.map((e) =>
      h('li', {}, h('strong', {}, e.name || 'event'), ' ', h('span', { class: 'muted' }, e.time ? `+${ms(Date.parse(e.time) - t0)}` : ''),
        e.attributes && Object.keys(e.attributes).length ? folded(e.attributes, 0) : null)))] : null,
    Array.isArray(assets) && assets.length ? [h('h4', {}, 'Assets'), h('div', { id: 'span-assets', class: 'assets' }, assets.map(assetView))] : null,
  ].flat(Infinity).filter(Boolean));
}

function section(title, id, value) {
  if (value == null) return null;
  return [h('h4', {}, title), h('div', { id, class: 'value' }, rendered(value))];
}

/**
 * A value as a person reads it: chat messages as turns, text (and {content: text}) as
 * markdown, the rest as folded JSON; the raw JSON of a rendered object one click away.
 */
export function rendered(v) {
  if (typeof v === 'string') return markdown(v);
  const msgs = Array.isArray(v) ? v : Array.isArray(v?.messages) ? v.messages : null;
  if (msgs && msgs.length && msgs.every((m) => m && typeof m === 'object' && typeof m.role === 'string')) {
    return [msgs.map((m) => h('div', { class: `turn ${m.role}` }, h('div', { class: 'role' }, m.role),
      typeof m.content === 'string' ? markdown(m.content) : folded(m.content ?? m, 1))), raw(v)];
  }
  if (v && typeof v === 'object' && !Array.isArray(v) && typeof v.content === 'string') {
    return [markdown(v.content), raw(v)];
  }
  return folded(v, 0);
}

function raw(v) {
  return h('details', { class: 'raw' }, h('summary', {}, 'JSON'), folded(v, 0));
}

/** JSON as a tree of <details>: objects and arrays open at the first level, folded deeper. */
export function folded(v, depth) {
  if (v === null || typeof v !== 'object') {
    const cls = v === null ? 'j-null' : typeof v === 'string' ? 'j-str' : typeof v === 'number' ? 'j-num' : 'j-bool';
    return h('span', { class: cls }, typeof v === 'string' ? JSON.stringify(v) : String(v));
  }
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  const label = Array.isArray(v) ? `[${entries.length} item${entries.length === 1 ? '' : 's'}]` : `{${entries.length} key${entries.length === 1 ? '' : 's'}}`;
  if (!entries.length) return h('span', { class: 'j-empty' }, Array.isArray(v) ? '[]' : '{}');
  return h('details', { class: 'json', open: depth < 1 }, h('summary', {}, label),
    h('ul', {}, entries.map(([k, x]) => h('li', {}, h('span', { class: 'j-key' }, `${k}: `), folded(x, depth + 1)))));
}

// --- markdown ----------------------------------------------------------------------------

/**
 * Renders a small, safe subset of markdown as DOM nodes (never as HTML text): fenced code,
 * headings, lists, paragraphs, and inline code, bold, italics and http(s) links.
 */
export function markdown(text) {
  const root = h('div', { class: 'md' });
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let para = [], list = null;
  const flush = () => {
    if (para.length) root.append(h('p', {}, inline(para.join('\n'))));
    para = [];
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^```/.test(line)) {
      flush();
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      root.append(h('pre', {}, h('code', {}, code.join('\n'))));
      continue;
    }
    const head = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/.exec(line);
    if (head) {
      flush();
      root.append(h(`h${Math.min(6, head[1].length + 3)}`, {}, inline(head[2])));
    } else if (item) {
      if (para.length) { root.append(h('p', {}, inline(para.join('\n')))); para = []; }
      const tag = item[1] ? 'ol' : 'ul';
      if (!list || list.tagName.toLowerCase() !== tag) root.append(list = h(tag, {}));
      list.append(h('li', {}, inline(item[2])));
    } else if (!line.trim()) {
      flush();
    } else {
      list = null;
      para.push(line);
    }
  }
  flush();
  return root;
}

function inline(text) {
  const out = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g;
  let last = 0, m;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] != null) out.push(h('code', {}, m[1]));
    else if (m[2] != null) out.push(h('strong', {}, m[2]));
    else if (m[3] != null) out.push(h('em', {}, m[3]));
    else out.push(h('a', { href: m[5], rel: 'noopener noreferrer', target: '_blank' }, m[4]));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// --- assets ------------------------------------------------------------------------------

/** An asset a span stored: an image is fetched (with the credential) and shown. */
function assetView(a) {
  const label = `${a.type || 'asset'} ${a.mime_type || ''} · ${a.size ?? '?'} bytes`;
  const box = h('figure', { class: 'asset', 'data-asset': a.asset_id }, h('figcaption', {}, label));
  if (String(a.mime_type || '').startsWith('image/')) {
    blob(`/assets/${encodeURIComponent(a.asset_id)}/content`).then((b) => new Promise((ok, fail) => {
      const r = new FileReader();
      r.onload = () => ok(r.result);
      r.onerror = () => fail(r.error);
      r.readAsDataURL(b);
    })).then((src) => box.prepend(h('img', { src, alt: `Image asset ${a.asset_id}` })))
      .catch((e) => box.append(h('p', { class: 'error' }, `Cannot show it: ${e.message}`)));
  }
  return box;
}

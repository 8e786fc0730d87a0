// Studio's DOM helpers, formatting and page frame, shared by every page module.

const main = document.getElementById('main');
const statusBox = document.getElementById('status');

// --- DOM helpers -------------------------------------------------------------------------

/** Builds an element: attributes (on* are listeners, value sets the property) and children. */
export function h(tag, attrs, ...kids) {
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
export function field(label, control, hint, input = control) {
  if (!input.id) input.id = 'f' + ++uid;
  const kids = [h('label', { for: input.id }, label), control];
  if (hint) {
    const hid = input.id + '-hint';
    input.setAttribute('aria-describedby', hid);
    kids.push(h('div', { id: hid, class: 'muted' }, hint));
  }
  return h('div', {}, kids);
}

export function toast(msg, isError) {
  statusBox.textContent = msg;
  statusBox.className = 'toast' + (isError ? ' error' : '');
  statusBox.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { statusBox.hidden = true; }, 4000);
}

export const json = (v) => JSON.stringify(v ?? null, null, 2);
export const when = (t) => (t ? new Date(t).toLocaleString() : '—');
export const cost = (c) => '$' + Number(c || 0).toFixed(6);
export const badge = (s) => h('span', { class: 'badge s-' + s }, s.replace('_', ' '));

export function parseJSON(text, what) {
  try { return JSON.parse(text); } catch (e) { throw new Error(`${what} is not valid JSON: ${e.message}`); }
}

/** Runs fn for a button press: disables the button meanwhile and reports errors. */
export async function act(button, fn) {
  if (button) button.disabled = true;
  try {
    await fn();
  } catch (e) {
    if (e.name !== 'AbortError') toast(e.message, true); // aborted: the user left the page
  } finally {
    if (button && button.isConnected) button.disabled = false;
  }
}

/**
 * A button that asks for a second click (its label becomes confirmLabel) before running fn
 * with act, for what cannot be undone.
 */
export function confirmButton(attrs, label, confirmLabel, fn) {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', (ev) => {
    if (b.dataset.armed !== '1') {
      b.dataset.armed = '1';
      b.textContent = confirmLabel;
      return;
    }
    act(ev.currentTarget, fn);
  });
  return b;
}

/**
 * The pager of a list page. Past the API's count cap (total_capped) the total is a lower
 * bound and total_pages counts only its pages: the pager says "more than", and Next follows
 * next_cursor's presence (a full page of such a list always has one) rather than total_pages.
 */
export function pager(p, go) {
  if (!p || p.total_pages <= 1) return h('p', { class: 'muted' }, `${p?.total ?? 0} in all`);
  const where = p.total_capped ? `Page ${p.page} (more than ${p.total - 1} in all)` : `Page ${p.page} of ${p.total_pages} (${p.total} in all)`;
  return h('div', { class: 'row', role: 'navigation', 'aria-label': 'Pages' },
    h('button', { type: 'button', disabled: p.page <= 1, onclick: () => go(p.page - 1) }, 'Previous'),
    h('span', {}, where),
    h('button', { type: 'button', disabled: !p.next_cursor, onclick: () => go(p.page + 1) }, 'Next'));
}

export function render(title, ...kids) {
  document.title = `${title} · agentplane Studio`;
  main.replaceChildren(h('h1', {}, title), ...kids.flat(Infinity).filter((k) => k != null && k !== false));
}

// --- filters -----------------------------------------------------------------------------

/** The execution statuses, in lifecycle order. */
export const STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled', 'awaiting_approval', 'rejected'];

/** An RFC 3339 time as a datetime-local value (local time, to the minute); '' for none. */
export function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A datetime-local value as RFC 3339 UTC; '' for none. */
export function fromLocalInput(v) {
  return v ? new Date(v).toISOString() : '';
}

/** A select of values with an "any" first, the current one selected. */
export function pick(id, values, current, labels) {
  return h('select', { id, name: id }, h('option', { value: '' }, 'any'),
    values.map((v, i) => h('option', { value: v, selected: v === current }, labels ? labels[i] : v)));
}

/** The hash of a filtered, paged list: base, then each control's value that is set, then page p. */
export function filterHash(base, controls, p) {
  const out = new URLSearchParams();
  for (const [k, el] of Object.entries(controls)) {
    const v = el.type === 'datetime-local' ? fromLocalInput(el.value) : el.value.trim();
    if (v) out.set(k, v);
  }
  if (p > 1) out.set('page', p);
  return `${base}?${out}`;
}

/** The API query of one page (25 rows) of a filtered list: the page's hash parameters named in filters. */
export function listQuery(params, filters) {
  const q = new URLSearchParams({ page: Number(params.get('page') || 1), limit: 25 });
  for (const k of filters) if (params.get(k)) q.set(k, params.get(k));
  return q;
}

/** A text filter control (id) showing the hash parameter name. */
export function textFilter(id, params, name) {
  return h('input', { id, value: params.get(name) || '', maxlength: 200 });
}

/** The created_after and created_before controls (ids prefix-from, prefix-to) of a list. */
export function timeFilters(prefix, params) {
  return {
    created_after: h('input', { id: `${prefix}-from`, type: 'datetime-local', value: toLocalInput(params.get('created_after')) }),
    created_before: h('input', { id: `${prefix}-to`, type: 'datetime-local', value: toLocalInput(params.get('created_before')) }),
  };
}

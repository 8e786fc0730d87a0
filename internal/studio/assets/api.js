// The public API client of Studio: every call goes to /api/v1 with the credential the user
// gave (an API key, or a login token and the chosen workspace), kept in sessionStorage.

const STORE = 'agentplane.studio';

/** The signed-in credential: {key} or {token, email, workspace, workspaceName}. */
export const session = {
  get() {
    try { return JSON.parse(sessionStorage.getItem(STORE)) || null; } catch { return null; }
  },
  set(v) { sessionStorage.setItem(STORE, JSON.stringify(v)); },
  clear() { sessionStorage.removeItem(STORE); },
};

/** An error answer of the API: its status, stable code and message. */
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let unauthorized = () => {};
/** Sets what happens when the API says 401 (the credential expired or was revoked). */
export function onUnauthorized(fn) { unauthorized = fn; }

function headers(extra) {
  const h = { Accept: 'application/json', ...extra };
  const s = session.get();
  if (s?.key) h['X-API-Key'] = s.key;
  if (s?.token) h.Authorization = 'Bearer ' + s.token;
  if (s?.workspace) h['X-Workspace-ID'] = s.workspace;
  return h;
}

async function failure(res, opts) {
  let payload = null;
  try { payload = await res.json(); } catch { /* not JSON */ }
  if (res.status === 401 && !opts.quiet401) unauthorized();
  return new APIError(res.status, payload?.error || `http_${res.status}`, payload?.message || res.statusText || 'request failed');
}

/**
 * Calls the API and returns the envelope's data (or the whole envelope with opts.full).
 * Paths are relative to /api/v1 unless they start with "//" (then taken from the root).
 */
export async function call(method, path, body, opts = {}) {
  const init = { method, headers: headers(body !== undefined ? { 'Content-Type': 'application/json' } : {}) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const url = path.startsWith('//') ? path.slice(1) : '/api/v1' + path;
  const res = await fetch(url, init);
  if (!res.ok) throw await failure(res, opts);
  const payload = res.status === 204 ? null : await res.json();
  return opts.full ? payload : payload?.data;
}

/**
 * Reads every page of a list (100 a page, at most maxPages pages: a bounded read) and
 * returns the items.
 */
export async function callAll(path, maxPages = 5) {
  const out = [];
  const sep = path.includes('?') ? '&' : '?';
  for (let page = 1; page <= maxPages; page++) {
    const res = await call('GET', `${path}${sep}limit=100&page=${page}`, undefined, { full: true });
    out.push(...res.data);
    if (!res.pagination?.next_cursor) break; // total_pages stops short of a capped total's pages
  }
  return out;
}

/** Fetches a binary answer (an asset's content) with the credential, as a Blob. */
export async function blob(path) {
  const res = await fetch('/api/v1' + path, { headers: headers({ Accept: '*/*' }) });
  if (!res.ok) throw await failure(res, {});
  return res.blob();
}

/**
 * Reads a Server-Sent Events answer with fetch (so the credential goes in headers, which
 * EventSource cannot send), calling onEvent(name, data) per frame until the terminal
 * `done` or `error` frame or the end of the body. Returns the terminal frame.
 */
export async function stream(method, path, { body, onEvent, signal } = {}) {
  const extra = { Accept: 'text/event-stream' };
  if (body !== undefined) extra['Content-Type'] = 'application/json';
  const res = await fetch('/api/v1' + path, {
    method, headers: headers(extra), body: body !== undefined ? JSON.stringify(body) : undefined, signal,
  });
  if (!res.ok) throw await failure(res, {});
  if (res.status === 204 || !res.body) return null;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return null;
      buf = (buf + value).replace(/\r\n?/g, '\n');
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let name = 'message';
        const data = [];
        for (const line of frame.split('\n')) {
          if (line.startsWith(':')) continue;
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          if (field === 'event') name = val;
          else if (field === 'data') data.push(val);
        }
        if (!data.length) continue;
        let parsed;
        try { parsed = JSON.parse(data.join('\n')); } catch { parsed = { content: data.join('\n') }; }
        onEvent?.(name, parsed);
        if (name === 'done' || name === 'error') return { event: name, data: parsed };
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

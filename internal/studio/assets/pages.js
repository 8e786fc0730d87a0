// Studio's other pages: chat, prompts, credentials, MCP tools and API keys.
import { call, stream } from './api.js';
import { act, badge, confirmButton, cost, field, h, json, parseJSON, pager, render, toast, when } from './ui.js';
import { go, pageAbort, route } from './nav.js';
import { agentNames } from './executions.js';

// --- chat --------------------------------------------------------------------------------

export async function chatPage() {
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

export async function chatSessionPage(id) {
  const [s, msgs] = await Promise.all([call('GET', `/chat/sessions/${id}`), call('GET', `/chat/sessions/${id}/messages?limit=100`)]);
  const agent = await call('GET', `/agents/${s.agent_id}`).catch(() => null);
  const log = h('div', { class: 'msgs', id: 'chat-log', role: 'log', 'aria-live': 'polite' },
    msgs.map((m) => h('div', { class: `msg ${m.role}` }, m.content)));
  const text = h('textarea', { id: 'chat-input', required: true, rows: 3 });
  const send = h('button', { class: 'primary', type: 'submit', id: 'chat-send' }, 'Send');
  render(s.title || 'Chat session',
    h('p', { class: 'muted', id: 'chat-with' }, 'With agent ', h('a', { href: `#/agents/${s.agent_id}`, title: s.agent_id }, agent?.name || s.agent_id)),
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

export async function promptsPage(params) {
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

export async function promptPage(id) {
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

export async function credentialsPage(params) {
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

export async function mcpToolsPage() {
  const [list, creds] = await Promise.all([
    call('GET', '/mcp-tools?limit=100'),
    call('GET', '/credentials?limit=100').catch(() => []), // a key without credentials:read registers servers without auth
  ]);
  const name = h('input', { id: 'mcp-name', required: true, maxlength: 200 });
  const transport = h('select', { id: 'mcp-transport' }, [['streamable_http', 'Streamable HTTP'], ['sse', 'HTTP + SSE (older servers)'],
    ['stdio', 'stdio (a command on the server)']].map(([v, label]) => h('option', { value: v }, label)));
  const url = h('input', { id: 'mcp-url', type: 'url', placeholder: 'https://tools.example.com/mcp' });
  const command = h('input', { id: 'mcp-command', placeholder: 'npx -y @modelcontextprotocol/server-everything' });
  const credential = h('select', { id: 'mcp-credential' }, h('option', { value: '' }, 'None'),
    creds.map((c) => h('option', { value: c.id }, `${c.name} (${c.type})`)));
  const urlField = field('URL', url);
  const commandField = field('Command', command, 'Runs on the server, which must allow it (serve --allow-stdio-mcp).');
  const showFields = () => {
    const stdio = transport.value === 'stdio';
    urlField.hidden = stdio;
    url.required = !stdio;
    commandField.hidden = !stdio;
    command.required = stdio;
  };
  transport.addEventListener('change', showFields);
  showFields();
  const cards = list.map((m) => {
    const remove = confirmButton({ class: 'danger' }, `Remove ${m.name}`, `Confirm: remove ${m.name}`, async () => {
      await call('DELETE', `/mcp-tools/${m.id}`);
      toast(`${m.name} removed`);
      route();
    });
    return h('section', { class: 'card', 'aria-label': m.name, 'data-mcp': m.name },
      h('h2', {}, m.name, ' ', h('span', { class: 'badge' }, m.transport), m.enabled ? null : h('span', { class: 'badge' }, 'disabled')),
      h('p', { class: 'muted' }, m.url || [m.command, ...(m.args || [])].join(' '),
        ` · refreshed ${when(m.refreshed_at)}`),
      m.last_error ? h('p', { class: 'error' }, `Last refresh failed: ${m.last_error}`) : null,
      (m.tools || []).length
        ? h('ul', {}, m.tools.map((t) => h('li', {}, h('strong', {}, t.name), t.description ? ` — ${t.description}` : '')))
        : h('p', { class: 'muted' }, 'No tools listed yet.'),
      h('div', { class: 'row' },
        h('button', { type: 'button', onclick: (ev) => act(ev.currentTarget, async () => {
          await call('POST', `/mcp-tools/${m.id}/refresh`);
          toast(`${m.name} refreshed`);
          route();
        }) }, `Refresh ${m.name}`), remove));
  });
  render('MCP tools',
    cards.length ? cards : h('p', { class: 'muted' }, 'No MCP servers registered yet.'),
    h('h2', {}, 'Register an MCP server'),
    h('form', {
      onsubmit: (ev) => {
        ev.preventDefault();
        act(ev.submitter, async () => {
          const body = { name: name.value, transport: transport.value };
          if (transport.value === 'stdio') {
            const [cmd, ...args] = command.value.trim().split(/\s+/);
            Object.assign(body, { command: cmd, args });
          } else {
            body.url = url.value;
          }
          if (credential.value) body.credential_id = credential.value;
          const m = await call('POST', '/mcp-tools', body);
          // List its tools at once; a server that does not answer stays registered, its error shown.
          const r = await call('POST', `/mcp-tools/${m.id}/refresh`);
          if (r?.last_error) toast(`${m.name} registered, but listing its tools failed: ${r.last_error}`, true);
          else toast(`${m.name} registered with ${(r?.tools || []).length} tools`);
          route();
        });
      },
    }, h('div', { class: 'row' }, field('Name', name), field('Transport', transport), urlField, commandField, field('Credential', credential)),
    h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit', id: 'mcp-create' }, 'Register server'))));
}

// --- API keys ----------------------------------------------------------------------------

export async function keysPage() {
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
    const revoke = confirmButton({ class: 'danger revoke', 'data-key': k.name }, 'Revoke', `Confirm: revoke ${k.name}`, async () => {
      await call('DELETE', `/api-keys/${k.id}`);
      toast(`Key ${k.name} revoked`);
      route();
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

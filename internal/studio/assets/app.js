// Studio: a small single-page app over the public API. Pages are hash routes (#/agents…),
// each rendered by a function that fetches what it shows; no framework, no build step.
import { APIError, call, onUnauthorized, session } from './api.js';
import { act, field, h, render } from './ui.js';
import { go, newPage, setRouter } from './nav.js';
import { agentPage, agentsPage, newAgentPage } from './agents.js';
import { approvalsPage, executionPage, executionsPage } from './executions.js';
import { usagePage } from './usage.js';
import { tracePage, tracesPage } from './traces.js';
import { reviewPage, reviewQueuesPage } from './review.js';
import { datasetPage, datasetsPage, evaluatorPage, evaluatorsPage, rulePage, rulesPage } from './evaluation.js';
import { experimentComparePage, experimentPage, experimentsPage } from './experiments.js';
import { chatPage, chatSessionPage, credentialsPage, keysPage, mcpToolsPage, promptPage, promptsPage } from './pages.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
let mode = 'server';

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
  [/^\/usage$/, usagePage],
  [/^\/traces$/, tracesPage],
  [/^\/traces\/([^/]+)$/, tracePage],
  [/^\/review$/, reviewQueuesPage],
  [/^\/review\/([^/]+)$/, reviewPage],
  [/^\/datasets$/, datasetsPage],
  [/^\/datasets\/([^/]+)$/, datasetPage],
  [/^\/evaluators$/, evaluatorsPage],
  [/^\/evaluators\/([^/]+)$/, evaluatorPage],
  [/^\/rules$/, rulesPage],
  [/^\/rules\/([^/]+)$/, rulePage],
  [/^\/experiments$/, experimentsPage],
  [/^\/experiments\/compare$/, experimentComparePage],
  [/^\/experiments\/([^/]+)$/, experimentPage],
];

async function route() {
  const signal = newPage();
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
  main.dataset.route = ''; // set to the hash once its page is drawn (tests and screenshots wait on it)
  try {
    await hit[1](...path.match(hit[0]).slice(1).map(decodeURIComponent), params, signal);
    if (!signal.aborted) main.dataset.route = location.hash;
  } catch (e) {
    if (e.name === 'AbortError') return;
    render('Something went wrong', h('p', { role: 'alert', class: 'error' }, e.message));
  }
  main.focus({ preventScroll: true });
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
  setRouter(route);
  window.addEventListener('hashchange', route);
  await route();
  document.body.dataset.ready = String(Math.round(performance.now())); // ms from navigation to the first page
}

start();

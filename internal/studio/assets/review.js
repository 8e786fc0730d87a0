// Human review: annotation queues, and the review of one item at a time (claim the next,
// read the run, score it under the queue's score configs, complete it).
import { call, callAll } from './api.js';
import { act, field, h, json, render, toast, when } from './ui.js';
import { go, route } from './nav.js';

export async function reviewQueuesPage() {
  const [queues, configs] = await Promise.all([call('GET', '/annotation-queues?limit=100'), callAll('/score-configs?archived=false')]);
  const name = h('input', { id: 'queue-name', maxlength: 200, required: true });
  const boxes = configs.map((c) => h('label', { class: 'check' },
    h('input', { type: 'checkbox', value: c.id, class: 'queue-config' }), ` ${c.name} (${c.data_type})`));
  const create = (ev) => act(ev.currentTarget, async () => {
    const ids = boxes.map((b) => b.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
    const q = await call('POST', '/annotation-queues', { name: name.value.trim(), score_config_ids: ids });
    toast(`Queue ${q.name} created`);
    go(`#/review/${q.id}`);
  });
  render('Review',
    h('p', { class: 'muted' }, 'Annotation queues: runs for people to score. Claim the next item, score it, complete it.'),
    queues.length ? h('table', { id: 'queues' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Queue'), h('th', {}, 'Pending'), h('th', {}, 'Completed'), h('th', {}, 'Created'))),
      h('tbody', {}, queues.map((q) => h('tr', {},
        h('td', {}, h('a', { href: `#/review/${q.id}` }, q.name), q.description ? h('div', { class: 'muted' }, q.description) : null),
        h('td', { class: 'pending' }, q.pending), h('td', { class: 'completed' }, q.completed), h('td', {}, when(q.created_at))))))
      : h('p', { class: 'muted', id: 'queues-empty' }, 'No annotation queue yet.'),
    h('section', { class: 'card' }, h('h2', {}, 'New queue'),
      field('Name', name),
      configs.length ? h('fieldset', {}, h('legend', {}, 'Score configs reviewers score under'), boxes)
        : h('p', { class: 'muted' }, 'Create a score config first (POST /api/v1/score-configs).'),
      h('button', { type: 'button', class: 'primary', id: 'queue-create', onclick: create }, 'Create queue')));
}

/** A control for one score config: a number within its range, a category, or yes/no. */
function scoreControl(c) {
  const id = `score-${c.id}`;
  if (c.data_type === 'numeric') {
    return h('input', { id, type: 'number', step: 'any', min: c.min ?? null, max: c.max ?? null, 'data-config': c.id, 'data-type': c.data_type });
  }
  const labels = c.data_type === 'boolean' ? ['true', 'false'] : c.categories.map((x) => x.label);
  return h('select', { id, 'data-config': c.id, 'data-type': c.data_type },
    h('option', { value: '' }, '—'), labels.map((l) => h('option', { value: l }, l)));
}

export async function reviewPage(id) {
  const claim = await call('POST', `/annotation-queues/${id}/next`);
  const q = claim.queue;
  const counts = h('p', { class: 'muted', id: 'review-counts' }, `${q.pending} pending · ${q.completed} completed`);
  if (!claim.item) {
    return render(`Review: ${q.name}`, counts,
      h('p', { id: 'review-done' }, 'Nothing left to review in this queue. ', h('a', { href: '#/review' }, 'Back to the queues')));
  }
  const configs = await Promise.all(q.score_config_ids.map((cid) => call('GET', `/score-configs/${cid}`)));
  const controls = configs.map(scoreControl);
  const comment = h('textarea', { id: 'review-comment', maxlength: 10000 });
  const x = claim.execution;
  const complete = (ev) => act(ev.currentTarget, async () => {
    const scores = [];
    for (const c of controls) {
      if (c.value === '') continue;
      const s = { config_id: c.dataset.config, comment: comment.value };
      if (c.dataset.type === 'numeric') s.value = Number(c.value);
      else s.string_value = c.value;
      scores.push(s);
    }
    if (!scores.length) throw new Error('Give at least one score before completing.');
    await call('POST', `/annotation-queues/${id}/items/${claim.item.id}/complete`, { scores });
    toast('Review saved: the next item is yours');
    route();
  });
  render(`Review: ${q.name}`, counts,
    h('p', { class: 'muted' }, `Yours until ${when(claim.item.claim_expires_at)} · execution `,
      h('a', { href: `#/executions/${x.id}`, id: 'review-execution' }, x.id), ` · ${x.status}`),
    h('section', { class: 'card' }, h('h2', {}, 'Input'), h('pre', { id: 'review-input' }, json(x.input))),
    h('section', { class: 'card' }, h('h2', {}, 'Output'), h('pre', { id: 'review-output' }, json(x.output))),
    h('section', { class: 'card' }, h('h2', {}, 'Scores'),
      configs.map((c, i) => field(c.name + (c.description ? ` — ${c.description}` : ''), controls[i])),
      field('Comment', comment),
      h('button', { type: 'button', class: 'primary', id: 'review-complete', onclick: complete }, 'Complete and take the next')));
}

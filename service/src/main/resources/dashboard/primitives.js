// The election, semaphore and read-write lock views of the dashboard: names are watched from each view's search
// box (as mutexes are), and their state is pushed over the dashboard's WebSocket ({"subscribe": {"elections": [...],
// "semaphores": [...], "rwlocks": [...]}}, docs/vertx.md): the current state at subscribe, then every change.
'use strict';
(() => {
  const d = window.fdbcoordDashboard;
  const { h, $, api, guarded, clock, enc } = d;
  const HISTORY_MAX = 20;

  /** Per kind (the subscribe field): its message type, its view and how a card shows its state. */
  const kinds = {
    elections: { type: 'election', noun: 'election', render: renderElection },
    semaphores: { type: 'semaphore', noun: 'semaphore', render: renderSemaphore },
    rwlocks: { type: 'rwlock', noun: 'read-write lock', render: renderReadWriteLock },
  };
  for (const k of Object.values(kinds)) {
    k.watched = [];            // names the operator watches, newest first
    k.requested = new Set();   // asked for on this connection
    k.subscribed = new Set();  // confirmed by the server
    k.latest = new Map();      // name -> newest pushed message
    k.history = new Map();     // name -> [{at, text}] of the changes pushed since watching, newest first
  }
  const queues = new Map();    // election -> candidates queued (its mutex's queue), read on each change

  function kindOf(type) {
    return Object.keys(kinds).find(k => kinds[k].type === type);
  }

  function nameOf(msg) {
    return msg.type === 'election' ? msg.election : msg.name;
  }

  // ---------------------------------------------------------------- subscriptions

  function sync() {
    const socket = d.socket();
    if (!socket) return;
    const subscribe = {};
    const unsubscribe = {};
    for (const [kind, k] of Object.entries(kinds)) {
      const add = k.watched.filter(n => !k.requested.has(n));
      const drop = [...k.requested].filter(n => !k.watched.includes(n));
      add.forEach(n => k.requested.add(n));
      drop.forEach(n => { k.requested.delete(n); k.subscribed.delete(n); });
      if (add.length) subscribe[kind] = add;
      if (drop.length) unsubscribe[kind] = drop;
    }
    if (Object.keys(unsubscribe).length) socket.send(JSON.stringify({ unsubscribe }));
    if (Object.keys(subscribe).length) socket.send(JSON.stringify({ subscribe }));
  }

  d.addExtension({
    open: sync,
    closed() {
      for (const k of Object.values(kinds)) {
        k.requested.clear();
        k.subscribed.clear();
      }
      markLive();
    },
    /** Takes the messages of these kinds; true when it did. */
    message(msg, view) {
      if (msg.type === 'subscribed' || msg.type === 'unsubscribed') {
        let mine = false;
        for (const [kind, k] of Object.entries(kinds)) {
          if (!msg[kind]) continue;
          mine = true;
          if (msg.type === 'subscribed') msg[kind].forEach(n => { if (k.requested.has(n)) k.subscribed.add(n); });
        }
        if (mine) markLive();
        return mine;
      }
      if (msg.type === 'error' && kinds[view]) {
        d.showError(view, new Error('live state: ' + msg.message));
        return true;
      }
      const kind = kindOf(msg.type);
      if (!kind) return false;
      const k = kinds[kind];
      const name = nameOf(msg);
      if (!k.watched.includes(name)) return true;
      k.latest.set(name, msg);
      const history = k.history.get(name) || [];
      history.unshift({ at: new Date(), text: describe(msg) });
      history.length = Math.min(history.length, HISTORY_MAX);
      k.history.set(name, history);
      if (kind === 'elections') guarded('elections', () => readQueue(name));
      render(kind, name);
      return true;
    },
  });

  /** Candidates queued behind the leader: the election's mutex queue (not pushed: read on each change and view). */
  async function readQueue(election) {
    const state = await api(`/mutexes/${enc(election)}`);
    queues.set(election, (state.queue || []).map(q => q.owner));
    render('elections', election);
  }

  function watch(kind, name) {
    name = name.trim();
    if (!name) return;
    const k = kinds[kind];
    if (!k.watched.includes(name)) k.watched.unshift(name);
    render(kind, name);
    sync();
    if (kind === 'elections') guarded('elections', () => readQueue(name));
  }

  function unwatch(kind, name) {
    const k = kinds[kind];
    k.watched = k.watched.filter(n => n !== name);
    k.latest.delete(name);
    k.history.delete(name);
    const card = $(`#view-${kind} .card[data-name="${CSS.escape(name)}"]`);
    if (card) card.remove();
    sync();
  }

  // ---------------------------------------------------------------- cards

  function render(kind, name) {
    const k = kinds[kind];
    if (!k.watched.includes(name)) return;
    const container = $(`#${kind}-watched`);
    let card = $(`.card[data-name="${CSS.escape(name)}"]`, container);
    if (!card) {
      card = h('article', { class: 'card', 'data-name': name, 'aria-label': `${k.noun} ${name}` },
        h('header', {},
          h('h3', { class: 'mono' }, name),
          h('span', { class: 'state' }, '…'),
          h('span', { class: 'live muted' }),
          h('button', { type: 'button', onclick: () => unwatch(kind, name) }, 'Stop watching')),
        h('dl', { class: 'facts' }),
        h('h4', {}, 'Changes pushed since watching (newest first)'),
        h('ol', { class: 'timeline history' }));
      container.prepend(card);
    }
    const msg = k.latest.get(name);
    k.render(card, name, msg);
    const history = k.history.get(name) || [];
    $('ol.history', card).replaceChildren(...(history.length
      ? history.map(e => h('li', {}, h('span', { class: 'mono' }, clock(e.at)), ' ', e.text))
      : [h('li', { class: 'muted' }, 'Nothing pushed yet.')]));
    markLive();
  }

  function badge(card, text, on) {
    const state = $('.state', card);
    state.textContent = text;
    state.className = 'state' + (on === null ? '' : on ? ' held' : ' free');
  }

  function renderElection(card, name, msg) {
    const leader = msg ? msg.leader : null;
    badge(card, !msg ? '…' : leader ? 'LEADER' : 'NO LEADER', msg ? !!leader : null);
    const queue = queues.get(name) || [];
    $('dl.facts', card).replaceChildren(
      h('dt', {}, 'Leader'), h('dd', { class: 'leader' }, leader ? leader.candidate : '—'),
      h('dt', {}, 'Epoch'), h('dd', { class: 'mono token epoch' }, leader ? leader.epoch : '—'),
      h('dt', {}, 'Candidates queued'), h('dd', {}, queue.length
        ? h('ol', { class: 'queue candidates' }, queue.map(c => h('li', {}, c))) : 'none'));
  }

  function renderSemaphore(card, name, msg) {
    const s = msg ? msg.state : null;
    const holders = s ? s.holders : [];
    const waiters = s ? s.waiters : [];
    badge(card, !s ? '…' : s.permits ? `${holders.length} OF ${s.permits} HELD` : 'UNUSED', s ? holders.length > 0 : null);
    $('dl.facts', card).replaceChildren(
      h('dt', {}, 'Permits'), h('dd', { class: 'permits' }, s ? (s.permits ? String(s.permits) : '— (not in use)') : '—'),
      h('dt', {}, 'Holders'), h('dd', {}, holders.length
        ? h('table', { class: 'holders' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Holder'), h('th', {}, 'Fencing token'))),
          h('tbody', {}, holders.map(x => h('tr', { 'data-owner': x.owner },
            h('td', {}, x.owner), h('td', { class: 'mono token' }, x.token)))))
        : 'none'),
      h('dt', {}, 'Queue'), h('dd', {}, waiters.length
        ? h('ol', { class: 'queue' }, waiters.map(w => h('li', {}, w))) : 'empty'),
      h('dt', {}, 'Version'), h('dd', { class: 'mono token' }, msg ? msg.version : '—'));
  }

  function renderReadWriteLock(card, name, msg) {
    const s = msg ? msg.state : null;
    const holders = s ? s.holders : [];
    const queue = s ? s.queue : [];
    const writer = holders.find(x => x.mode === 'write');
    const mode = !s ? '…' : writer ? 'WRITE' : holders.length ? 'READ' : 'FREE';
    badge(card, mode, s ? holders.length > 0 : null);
    $('dl.facts', card).replaceChildren(
      h('dt', {}, 'Mode'), h('dd', { class: 'mode' }, !s ? '—' : writer ? `write (held by ${writer.owner})`
        : holders.length ? `read (${holders.length} reader${holders.length > 1 ? 's' : ''})` : 'free'),
      h('dt', {}, 'Holders'), h('dd', {}, holders.length
        ? h('table', { class: 'holders' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Holder'), h('th', {}, 'Mode'), h('th', {}, 'Fencing token'))),
          h('tbody', {}, holders.map(x => h('tr', { 'data-owner': x.owner },
            h('td', {}, x.owner), h('td', {}, x.mode), h('td', { class: 'mono token' }, x.token)))))
        : 'none'),
      h('dt', {}, 'Queue'), h('dd', {}, queue.length
        ? h('ol', { class: 'queue' }, queue.map(w => h('li', {}, `${w.owner} (${w.mode})`))) : 'empty'),
      h('dt', {}, 'Version'), h('dd', { class: 'mono token' }, msg ? msg.version : '—'));
  }

  function describe(msg) {
    if (msg.type === 'election') {
      return msg.leader ? `${msg.leader.candidate} leads, epoch ${msg.leader.epoch}` : 'no leader';
    }
    const s = msg.state;
    if (msg.type === 'semaphore') {
      return `holders: ${s.holders.map(x => x.owner).join(', ') || 'none'}; queue: ${s.waiters.join(', ') || 'empty'}`;
    }
    return `holders: ${s.holders.map(x => `${x.owner} (${x.mode})`).join(', ') || 'none'}; queue: `
      + (s.queue.map(w => `${w.owner} (${w.mode})`).join(', ') || 'empty');
  }

  function markLive() {
    for (const [kind, k] of Object.entries(kinds)) {
      document.querySelectorAll(`#${kind}-watched .card`).forEach(card => {
        const live = k.subscribed.has(card.dataset.name);
        card.dataset.live = String(live);
        $('.live', card).textContent = live ? '(live: changes appear as they happen)' : '(not live yet)';
      });
    }
  }

  // ---------------------------------------------------------------- views

  for (const kind of Object.keys(kinds)) {
    const form = $(`#${kind}-search-form`);
    form.addEventListener('submit', e => {
      e.preventDefault();
      watch(kind, $(`#${kind}-search`).value);
    });
    d.addView(kind, {
      // The elections' queues are not pushed (a candidate joining changes no leader): read while the view shows.
      show: kind === 'elections'
        ? () => Promise.all(kinds.elections.watched.map(readQueue))
        : async () => kinds[kind].watched.forEach(n => render(kind, n)),
      every: kind === 'elections' ? 2000 : undefined,
    });
  }
})();

// The coordination dashboard: plain JavaScript, no build step, nothing loaded from elsewhere.
// Every request carries the bearer token kept in sessionStorage; a 401 shows the login prompt.
'use strict';
(() => {
  const TOKEN_KEY = 'fdbcoord.token';
  const HELD_PAGE = 10;
  const NAMESPACE_PAGE = 10;
  const STRING_PAGE = 20;
  const DIRECTORY_PAGE = 20;
  const TIMELINE_MAX = 100;
  const CHART_POINTS = 60;
  const METRICS_PERIOD_MS = 2000;

  const app = {
    token: sessionStorage.getItem(TOKEN_KEY),
    loginShown: false,
    started: false,
    view: null,
    socket: null,
    socketRetryMs: 500,
    subscribed: new Set(),   // mutexes the server confirmed
    requested: new Set(),    // mutexes asked for on this connection
    watched: [],             // mutexes the operator pinned (search box), in order
    timelines: new Map(),    // mutex -> events (and gaps) since the page opened, in sequence order
    lastSequence: new Map(), // mutex -> sequence of the newest event received: where a resubscription resumes
    since: null,             // the event log's position when the page opened: every timeline starts there
    outage: null,            // Date of the first failed request of an outage, while the service is unreachable
    inspected: new Map(),    // mutex -> {data, at} from /mutexes/{name}/inspect
    held: { after: [null], index: 0, names: [], next: null, read: false },
    namespaces: { all: [], page: 0, selected: null, stats: new Map() },
    strings: { after: ['0'], index: 0, next: null },
    metrics: { previous: null, series: { http: [], bus: [], p50: [], p99: [], wait50: [], wait99: [], locks: [] } },
    timers: [],
    directoryGeneration: 0,
    heldReload: null,
    extensions: [],          // {open(socket), closed(), message(msg) -> handled}: the views of primitives.js
  };

  // ---------------------------------------------------------------- helpers

  const $ = (selector, root = document) => root.querySelector(selector);

  /** An element with attributes and children (strings become text: nothing is parsed as HTML). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function svg(tag, attrs) {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    return el;
  }

  function duration(ms) {
    if (ms === null || ms === undefined) return '—';
    ms = Math.max(0, ms);
    if (ms < 1000) return `${Math.round(ms)} ms`;
    const s = ms / 1000;
    if (s < 60) return `${s.toFixed(1)} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min ${Math.floor(s % 60)} s`;
    const hours = Math.floor(m / 60);
    if (hours < 48) return `${hours} h ${m % 60} min`;
    return `${Math.floor(hours / 24)} d ${hours % 24} h`;
  }

  function clock(date) {
    return date.toTimeString().slice(0, 8) + '.' + String(date.getMilliseconds()).padStart(3, '0');
  }

  function number(n, digits = 0) {
    if (n === null || n === undefined || Number.isNaN(n)) return '—';
    return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  }

  function showError(view, error) {
    const el = $(`#view-${view} .error`);
    if (!el) return;
    if (error) {
      el.textContent = error.message || String(error);
      el.hidden = false;
    } else {
      el.hidden = true;
      el.textContent = '';
    }
  }

  function base64url(text) {
    const bytes = new TextEncoder().encode(text);
    let binary = '';
    bytes.forEach(b => { binary += String.fromCharCode(b); });
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  const enc = encodeURIComponent;

  // ---------------------------------------------------------------- requests and the token

  class Unauthorized extends Error {}

  /** The request never got an answer: the service (or the network to it) is down. */
  class Unreachable extends Error {}

  async function api(path, options = {}) {
    if (app.loginShown) throw new Unauthorized('not signed in');
    const headers = { Accept: options.text ? 'text/plain' : 'application/json' };
    if (app.token) headers.Authorization = 'Bearer ' + app.token;
    let body;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(path, { method: options.method || 'GET', headers, body, cache: 'no-store' });
    } catch (e) {
      outageBegins(e);
      throw new Unreachable(`service unreachable (${e.message})`);
    }
    if (app.outage) outageEnds();
    if (response.status === 401) {
      showLogin(app.token ? 'The token was refused: enter the right one.' : 'This service requires a bearer token.');
      throw new Unauthorized('unauthorized');
    }
    const text = await response.text();
    if (options.text && response.ok) return text;
    let json;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new Error(`${path} answered ${response.status} without JSON`);
    }
    if (!response.ok) {
      const error = new Error(`${json.error || response.status}: ${json.message || path}`);
      error.status = response.status;
      error.reason = json.error;
      throw error;
    }
    return json;
  }

  function showLogin(message) {
    app.loginShown = true;
    stopTimers();
    closeSocket();
    document.querySelectorAll('.view').forEach(v => { v.hidden = true; });
    $('#login-message').textContent = message;
    $('#login').hidden = false;
    setConnection('Signed out');
    $('#login-token').value = '';
    $('#login-token').focus();
  }

  function login(event) {
    event.preventDefault();
    app.token = $('#login-token').value;
    sessionStorage.setItem(TOKEN_KEY, app.token);
    app.loginShown = false;
    $('#login').hidden = true;
    start();
  }

  /**
   * Runs an async view action; errors go to the view's error line (401 is the login's business, an
   * unreachable service the outage banner's).
   */
  async function guarded(view, action) {
    try {
      await action();
      showError(view, null);
    } catch (e) {
      if (e instanceof Unreachable) showError(view, null);
      else if (!(e instanceof Unauthorized)) showError(view, e);
    }
  }

  // ---------------------------------------------------------------- outage

  function outageBegins(error) {
    if (!app.outage) app.outage = new Date();
    const banner = $('#outage');
    banner.textContent = `Service unreachable since ${clock(app.outage)}, retrying every 2 s. `
      + 'What the page shows is as last read before then.';
    banner.title = error.message;
    banner.hidden = false;
    document.body.classList.add('outage');
    renderHeld();
  }

  function outageEnds() {
    app.outage = null;
    $('#outage').hidden = true;
    $('#outage').textContent = '';
    document.body.classList.remove('outage');
    // Back at once rather than at the socket's next back-off step; the current view reads again.
    if (app.started && !app.loginShown && (!app.socket || app.socket.readyState > WebSocket.OPEN)) connectSocket();
    if (app.started && app.view) setTimeout(() => guarded(app.view, views[app.view].show), 0);
  }

  function setConnection(text) {
    $('#connection').textContent = text;
  }

  // ---------------------------------------------------------------- views and timers

  const views = {
    mutexes: { show: refreshMutexes, every: 2000 },
    cluster: { show: refreshNodes, every: 5000 },
    interners: { show: refreshNamespaces },
    directories: { show: showDirectoryRoot },
    health: { show: refreshHealth, every: 5000 },
  };

  function currentView() {
    const name = location.hash.replace(/^#/, '');
    return views[name] ? name : 'mutexes';
  }

  function showView() {
    if (app.loginShown) return;
    const name = currentView();
    app.view = name;
    document.querySelectorAll('nav a').forEach(a => {
      if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    });
    document.querySelectorAll('.view').forEach(v => { v.hidden = v.id !== `view-${name}`; });
    document.title = `${$(`nav a[data-view="${name}"]`).textContent} · fdbcoord`;
    guarded(name, views[name].show);
  }

  function stopTimers() {
    app.timers.forEach(clearInterval);
    app.timers = [];
  }

  function startTimers() {
    stopTimers();
    for (const [name, v] of Object.entries(views)) {
      if (v.every) {
        app.timers.push(setInterval(() => {
          if (app.view === name && !document.hidden) guarded(name, v.show);
        }, v.every));
      }
    }
    app.timers.push(setInterval(() => guarded('health', sampleMetrics), METRICS_PERIOD_MS));
    app.timers.push(setInterval(tickClocks, 1000));
  }

  async function start() {
    try {
      await api('/nodes');   // also the probe that asks for a token when one is needed
      // Where every timeline starts: the events of any mutex logged after this, whenever the page
      // learns the mutex's name, come from the store's event log (docs/dashboard.md).
      if (!app.since) app.since = (await api('/events/position')).position;
    } catch (e) {
      if (!(e instanceof Unauthorized)) setConnection('Live events: not connected');
      if (!(e instanceof Unauthorized)) setTimeout(start, 2000);
      return;
    }
    app.started = true;
    connectSocket();
    startTimers();
    guarded('health', sampleMetrics);
    showView();
  }

  // ---------------------------------------------------------------- WebSocket: live lock events

  function connectSocket() {
    closeSocket();
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
    const protocols = ['fdbcoord.v1'];
    if (app.token) protocols.push('fdbcoord.bearer.' + base64url(app.token));
    const socket = new WebSocket(url, protocols);
    app.socket = socket;
    setConnection('Live events: connecting…');
    socket.onopen = () => {
      app.socketRetryMs = 500;
      setConnection('Live events: connected');
      syncSubscriptions();
      app.extensions.forEach(x => x.open(socket));
    };
    socket.onmessage = message => onSocketMessage(JSON.parse(message.data));
    socket.onclose = () => {
      if (app.socket !== socket) return;
      app.socket = null;
      app.subscribed.clear();
      app.requested.clear();
      markWatchedLive();
      app.extensions.forEach(x => x.closed());
      if (app.loginShown) return;
      setConnection('Live events: disconnected, retrying');
      setTimeout(() => { if (!app.loginShown && !app.socket) connectSocket(); }, app.socketRetryMs);
      app.socketRetryMs = Math.min(10000, app.socketRetryMs * 2);
    };
  }

  function closeSocket() {
    const socket = app.socket;
    app.socket = null;
    app.subscribed.clear();
    app.requested.clear();
    app.extensions.forEach(x => x.closed());
    if (socket) socket.close();
  }

  /**
   * Subscribes to the watched mutexes and those on the held page; drops the others. A subscription
   * resumes after the newest event the page has of the mutex, or replays from the page's opening
   * position: the server sends what was logged meanwhile before the live events, so a mutex
   * subscribed late, or dropped and taken again, has no hole in its timeline (or an explicit gap).
   */
  function syncSubscriptions() {
    const socket = app.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    const wanted = new Set([...app.watched, ...app.held.names]);
    const add = [...wanted].filter(n => !app.requested.has(n));
    const drop = [...app.requested].filter(n => !wanted.has(n));
    if (drop.length) {
      drop.forEach(n => { app.requested.delete(n); app.subscribed.delete(n); });
      socket.send(JSON.stringify({ unsubscribe: drop }));
    }
    if (add.length) {
      add.forEach(n => app.requested.add(n));
      const after = {};
      add.forEach(n => { if (app.lastSequence.has(n)) after[n] = app.lastSequence.get(n); });
      const message = { subscribe: add, after };
      if (app.since) message.since = app.since;
      socket.send(JSON.stringify(message));
    }
  }

  function onSocketMessage(msg) {
    if (app.extensions.some(x => x.message(msg, app.view))) return;
    if (msg.type === 'subscribed') {
      (msg.mutexes || []).forEach(n => { if (app.requested.has(n)) app.subscribed.add(n); });
      markWatchedLive();
    } else if (msg.type === 'lock') {
      recordEvent(msg);
    } else if (msg.type === 'gap') {
      recordGap(msg);
    } else if (msg.type === 'error') {
      showError('mutexes', new Error('live events: ' + msg.message));
    }
  }

  function recordEvent(msg) {
    const last = app.lastSequence.get(msg.mutex);
    if (!last || msg.sequence > last) app.lastSequence.set(msg.mutex, msg.sequence);
    addToTimeline(msg.mutex, { ...msg, receivedAt: new Date() });
    if (app.view === 'mutexes') {
      guarded('mutexes', () => inspect(msg.mutex));
      reloadHeldSoon();
    }
  }

  /** Events after {@code msg.after} may be missing: marked in the timeline where they would be. */
  function recordGap(msg) {
    // Sorts after the position (20 hex digits) and before every later sequence.
    addToTimeline(msg.mutex, { gap: true, mutex: msg.mutex, after: msg.after, sequence: msg.after + '~', receivedAt: new Date() });
  }

  function addToTimeline(mutex, entry) {
    const events = app.timelines.get(mutex) || [];
    if (events.some(e => e.sequence === entry.sequence)) return;
    events.push(entry);
    events.sort((a, b) => (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
    while (events.length > TIMELINE_MAX) events.shift();
    app.timelines.set(mutex, events);
    renderTimeline(mutex);
  }

  /** One read of the held list for a burst of events. */
  function reloadHeldSoon() {
    if (app.heldReload) return;
    app.heldReload = setTimeout(() => {
      app.heldReload = null;
      guarded('mutexes', loadHeld);
    }, 200);
  }

  // ---------------------------------------------------------------- Mutexes

  async function inspect(name) {
    const data = await api(`/mutexes/${enc(name)}/inspect`);
    app.inspected.set(name, { data, at: performance.now() });
    renderWatched(name);
    return data;
  }

  /** Milliseconds of {@code field} in an inspection, moved on by the time since it was read. */
  function aged(info, field, sign) {
    const v = info.data[field];
    if (v === null || v === undefined) return null;
    return Math.max(0, v + sign * (performance.now() - info.at));
  }

  async function refreshMutexes() {
    await loadHeld();
    await Promise.all(app.watched.map(inspect));
  }

  async function loadHeld() {
    const held = app.held;
    const after = held.after[held.index];
    try {
      const page = await api(`/mutexes?limit=${HELD_PAGE}` + (after ? `&after=${enc(after)}` : ''));
      held.names = page.names;
      held.next = page.nextAfter;
      await Promise.all(held.names.map(n => api(`/mutexes/${enc(n)}/inspect`)
        .then(data => app.inspected.set(n, { data, at: performance.now() }))));
      held.read = true;
    } catch (e) {
      // What could not be read is not shown as empty: the list says it was not read.
      held.read = false;
      renderHeld();
      throw e;
    }
    renderHeld();
    syncSubscriptions();
  }

  function renderHeld() {
    const held = app.held;
    const filter = $('#mutex-search').value.trim();
    const tbody = $('#held-table tbody');
    tbody.replaceChildren();
    const matching = filter ? held.names.filter(name => name.includes(filter)) : held.names;
    for (const name of matching) {
      const info = app.inspected.get(name);
      const d = info ? info.data : {};
      const owner = d.owner || {};
      const queue = (d.queue || []).map(q => q.owner);
      tbody.append(h('tr', { class: 'clickable', 'data-mutex': name, title: 'Watch this mutex', onclick: () => watch(name) },
        h('td', { class: 'mono' }, name),
        h('td', {}, d.held ? owner.owner : 'free'),
        h('td', { class: 'mono token' }, owner.token || '—'),
        h('td', { class: 'num', 'data-clock': 'held', 'data-mutex': name }, info ? duration(aged(info, 'heldMs', 1)) : '—'),
        h('td', { class: 'num', 'data-clock': 'lease', 'data-mutex': name }, info ? duration(aged(info, 'leaseLeftMs', -1)) : '—'),
        h('td', {}, queue.length ? h('ol', { class: 'queue' }, queue.map(q => h('li', {}, q))) : 'empty')));
    }
    $('#held-empty').hidden = !held.read || app.outage !== null || held.names.length > 0;
    const page = `page ${held.index + 1}, ${held.names.length} held on it${held.next ? ', more on the next' : ''}`;
    $('#held-page').textContent = !held.read
      ? (app.outage ? '(not read: the service is unreachable)' : '(not read)')
      : `(${page}${app.outage ? '; as last read, the service is unreachable now' : ''})`;
    $('#held-filter').hidden = !filter;
    $('#held-filter-text').textContent = filter
      ? `${matching.length} of the ${held.names.length} held mutexes on this page match “${filter}”.` : '';
    $('#held-prev').disabled = held.index === 0;
    $('#held-next').disabled = !held.next;
  }

  function watch(name) {
    name = name.trim();
    if (!name) return;
    if (!app.watched.includes(name)) app.watched.unshift(name);
    renderWatched(name);
    syncSubscriptions();
    guarded('mutexes', () => inspect(name));
  }

  function unwatch(name) {
    app.watched = app.watched.filter(n => n !== name);
    const card = $(`#mutex-watched .card[data-mutex="${CSS.escape(name)}"]`);
    if (card) card.remove();
    syncSubscriptions();
  }

  function renderWatched(name) {
    if (!app.watched.includes(name)) {
      if (app.held.names.includes(name)) renderHeld();
      return;
    }
    const container = $('#mutex-watched');
    let card = $(`.card[data-mutex="${CSS.escape(name)}"]`, container);
    if (!card) {
      card = h('article', { class: 'card', 'data-mutex': name, 'aria-label': `Mutex ${name}` },
        h('header', {},
          h('h3', { class: 'mono' }, name),
          h('span', { class: 'state' }),
          h('span', { class: 'live muted' }),
          h('button', { type: 'button', onclick: () => unwatch(name) }, 'Stop watching')),
        h('dl', { class: 'facts' }),
        h('h4', {}, 'Timeline (every event since this page opened, from the store\'s event log; oldest first)'),
        h('ol', { class: 'timeline' }));
      container.prepend(card);
    }
    const info = app.inspected.get(name);
    const d = info ? info.data : null;
    const state = $('.state', card);
    state.textContent = !d ? '…' : d.held ? 'HELD' : 'FREE';
    state.className = 'state' + (d ? (d.held ? ' held' : ' free') : '');
    const owner = (d && d.owner) || {};
    const queue = (d && d.queue) || [];
    $('dl.facts', card).replaceChildren(
      h('dt', {}, 'Holder'), h('dd', { class: 'holder' }, d && d.held ? owner.owner : '—'),
      h('dt', {}, 'Fencing token'), h('dd', { class: 'mono token current-token' }, owner.token || '—'),
      h('dt', {}, 'Held for'), h('dd', { 'data-clock': 'held', 'data-mutex': name }, d ? duration(aged(info, 'heldMs', 1)) : '—'),
      h('dt', {}, 'Lease left'), h('dd', { 'data-clock': 'lease', 'data-mutex': name }, d ? duration(aged(info, 'leaseLeftMs', -1)) : '—'),
      h('dt', {}, 'Heartbeats'), h('dd', {}, d && d.held ? String(owner.heartbeats) : '—'),
      h('dt', {}, 'Queue'), h('dd', {}, queue.length
        ? h('ol', { class: 'queue' }, queue.map(q => h('li', { 'data-ticket': q.ticket }, q.owner)))
        : 'empty'));
    renderTimeline(name);
    markWatchedLive();
    if (app.held.names.includes(name)) renderHeld();
  }

  function markWatchedLive() {
    document.querySelectorAll('#mutex-watched .card').forEach(card => {
      const live = app.subscribed.has(card.dataset.mutex);
      card.dataset.live = String(live);
      $('.live', card).textContent = live ? '(live: events appear as they happen)' : '(not live yet)';
    });
  }

  function renderTimeline(name) {
    const card = $(`#mutex-watched .card[data-mutex="${CSS.escape(name)}"]`);
    if (!card) return;
    const list = $('ol.timeline', card);
    const events = app.timelines.get(name) || [];
    const version = events.map(e => e.sequence).join(',');
    if (list.dataset.version === version && list.childElementCount > 0) return;   // unchanged: keep the nodes
    list.dataset.version = version;
    list.replaceChildren(...events.map(e => (e.gap ? h('li', { class: 'gap', 'data-gap': e.after },
      h('span', { class: 'mono' }, clock(e.receivedAt)), ' ',
      h('span', { class: 'type' }, 'GAP'), ' ',
      'events after this point may be missing: the store\'s event log no longer holds them all '
      + '(it keeps mutex.eventRetentionMs)') : h('li', {
      'data-event': e.event, 'data-owner': e.owner || '', 'data-token': e.token || '',
      'data-previous-owner': e.previousOwner || '', 'data-sequence': e.sequence,
    },
    h('span', { class: 'mono' }, clock(e.receivedAt)), ' ',
    h('span', { class: 'type' }, e.event), ' ',
    describeEvent(e)))));
    if (!events.length) list.append(h('li', { class: 'muted' }, 'No event yet.'));
  }

  function describeEvent(e) {
    const token = e.token ? ` with token ${e.token}` : '';
    switch (e.event) {
      case 'ACQUIRED': return `${e.owner} took it${token}`;
      case 'HANDED_OFF': return `${e.previousOwner} released, ${e.owner} got it${token}`;
      case 'EXPIRED': return e.owner
        ? `${e.previousOwner} stopped heartbeating, ${e.owner} got it${token}`
        : `${e.previousOwner} stopped heartbeating; now free`;
      case 'RELEASED': return `${e.previousOwner} released; now free`;
      default: return JSON.stringify(e);
    }
  }

  function tickClocks() {
    document.querySelectorAll('[data-clock]').forEach(el => {
      const info = app.inspected.get(el.dataset.mutex);
      if (!info) return;
      el.textContent = el.dataset.clock === 'held'
        ? duration(aged(info, 'heldMs', 1)) : duration(aged(info, 'leaseLeftMs', -1));
    });
  }

  // ---------------------------------------------------------------- Cluster

  /** A node's state in words (the symbol only repeats them): up, a live member, or down. */
  function nodeStatus(n) {
    if (n.status === 'UP') return h('span', { class: 'node-state up' }, '▲ UP');
    if (n.status === 'MEMBER') {
      return h('span', { class: 'node-state member', title: 'listed by the cluster manager as a live node; its own '
        + 'health is on its own /nodes' }, '● live member');
    }
    if (n.departedAt) {
      const how = n.status === 'LEFT' ? 'left' : n.status === 'EVICTED' ? 'evicted' : 'gone';
      const why = n.status === 'EVICTED' ? 'removed by the cluster (its lease ran out or its process died)'
        : n.status === 'LEFT' ? 'left the cluster by itself' : 'no longer listed by the cluster manager';
      return h('span', { class: 'node-state gone', title: `${why}; listed for a while after` },
        `○ ${how} ${clock(new Date(n.departedAt))} (${duration(n.departedMs)} ago)`);
    }
    return h('span', { class: 'node-state down' }, `▼ ${n.status}`);
  }

  async function refreshNodes() {
    const answer = await api('/nodes');
    const nodes = answer.nodes.concat(answer.departed || []);
    const self = nodes.find(n => n.self);
    const others = nodes.filter(n => !n.self && !n.departedAt).length;
    const gone = nodes.filter(n => n.departedAt).length;
    $('#cluster-summary').textContent = !self || !self.clustered
      ? 'This node alone: it is not clustered.'
      : `${1 + others} nodes in the Vert.x cluster: this node and ${others} other live member${others === 1 ? '' : 's'} `
        + '(as its cluster manager lists them)'
        + (gone ? `; ${gone} that went lately, listed for a while.` : '.');
    $('#nodes-table tbody').replaceChildren(...nodes.map(n => h('tr', { 'data-node': n.id, 'data-status': n.status,
      class: n.departedAt ? 'departed' : null },
      h('td', {}, h('span', { class: 'node-name' }, n.name || n.id), n.self ? ' (this node)' : '',
        h('div', { class: 'mono muted', title: 'the cluster manager\'s id of the node' }, n.id)),
      h('td', { class: 'mono node-host' }, n.host || '—'),
      h('td', { class: 'num node-pid' }, n.pid === null || n.pid === undefined ? '—' : String(n.pid)),
      h('td', { class: 'node-status' }, nodeStatus(n), n.error ? ` — ${n.error}` : ''),
      h('td', { class: 'num', title: n.departedAt ? 'when it went' : null }, duration(n.uptimeMs)),
      h('td', {}, n.store || '—', n.storeWriteMs !== null && n.storeWriteMs !== undefined ? ` (write ${number(n.storeWriteMs, 1)} ms)` : ''),
      h('td', { class: 'mono' }, n.http || '—'),
      h('td', {}, n.clustered ? 'yes' : 'no'),
      h('td', { class: 'num' }, duration(n.leaseMs)))));
  }

  // ---------------------------------------------------------------- Interners

  async function refreshNamespaces() {
    const { namespaces } = await api('/interners');
    app.namespaces.all = namespaces;
    const pages = Math.max(1, Math.ceil(namespaces.length / NAMESPACE_PAGE));
    app.namespaces.page = Math.min(app.namespaces.page, pages - 1);
    await renderNamespaces();
  }

  async function renderNamespaces() {
    const ns = app.namespaces;
    const pages = Math.max(1, Math.ceil(ns.all.length / NAMESPACE_PAGE));
    const shown = ns.all.slice(ns.page * NAMESPACE_PAGE, (ns.page + 1) * NAMESPACE_PAGE);
    const stats = await Promise.all(shown.map(n => api(`/interners/${enc(n)}/stats`).catch(e => {
      if (e instanceof Unauthorized) throw e;
      return { namespace: n, error: e.message };
    })));
    stats.forEach(s => { if (!s.error) ns.stats.set(s.namespace, s); });
    $('#ns-table tbody').replaceChildren(...stats.map(s => h('tr', {
      class: 'clickable' + (s.namespace === ns.selected ? ' selected' : ''), 'data-namespace': s.namespace,
      onclick: () => selectNamespace(s.namespace),
    },
    h('td', { class: 'mono' }, s.namespace),
    h('td', { class: 'num' }, s.error ? s.error : number(s.strings)),
    h('td', { class: 'num' }, s.error ? '—' : number(s.sequencesInUse)),
    h('td', { class: 'num' }, s.error ? '—' : String(s.sequenceBits)))));
    $('#ns-empty').hidden = ns.all.length > 0;
    $('#ns-page').textContent = `(page ${ns.page + 1} of ${pages}, ${ns.all.length} in all)`;
    $('#ns-prev').disabled = ns.page === 0;
    $('#ns-next').disabled = ns.page >= pages - 1;
  }

  function selectNamespace(name) {
    app.namespaces.selected = name;
    app.strings = { after: ['0'], index: 0, next: null };
    $('#ns-detail').hidden = false;
    $('#ns-name').textContent = name;
    $('#ns-lookup-result').textContent = '';
    document.querySelectorAll('#ns-table tbody tr').forEach(tr => {
      tr.classList.toggle('selected', tr.dataset.namespace === name);
    });
    guarded('interners', loadStrings);
  }

  async function loadStrings() {
    const ns = app.namespaces.selected;
    const s = app.strings;
    const page = await api(`/interners/${enc(ns)}/strings?limit=${STRING_PAGE}&after=${s.after[s.index]}`);
    s.next = page.nextAfter;
    $('#str-table tbody').replaceChildren(...page.entries.map(e => h('tr', { 'data-id': e.id },
      h('td', { class: 'mono num' }, e.id), h('td', { class: 'mono' }, e.string))));
    $('#str-page').textContent = `(page ${s.index + 1}, ${page.entries.length} shown)`;
    $('#str-prev').disabled = s.index === 0;
    $('#str-next').disabled = !s.next;
  }

  /** Whether {@code digits} can be an id of a namespace with {@code bits} sequence bits (sequence 0 is reserved). */
  function isId(digits, bits) {
    const id = BigInt(digits);
    const low = bits ? 1n << BigInt(64 - bits) : 1n;
    return id >= low && id < (1n << 64n);
  }

  async function lookup(event) {
    event.preventDefault();
    const ns = app.namespaces.selected;
    const query = $('#ns-lookup').value;
    const out = $('#ns-lookup-result');
    out.textContent = '';
    if (!ns || query === '') return;
    await guarded('interners', async () => {
      // Both are reads: resolve assigns nothing. Digits may be an id and also a string.
      const answers = [];
      if (/^[0-9]+$/.test(query)) {
        if (isId(query, (app.namespaces.stats.get(ns) || {}).sequenceBits)) {
          const r = await api(`/interners/${enc(ns)}/lookup`, { method: 'POST', body: { ids: [query] } });
          answers.push(r.strings[0] === null ? `No string has id ${query}.` : `Id ${query} is the string "${r.strings[0]}".`);
        } else {
          answers.push(`${query} is not an id here (ids are at least 2^(64 - sequence bits) and below 2^64).`);
        }
      }
      const r = await api(`/interners/${enc(ns)}/resolve`, { method: 'POST', body: { strings: [query] } });
      answers.push(r.ids[0] === null ? `The string "${query}" is not interned.` : `The string "${query}" has id ${r.ids[0]}.`);
      out.textContent = answers.join(' ');
    });
  }

  // ---------------------------------------------------------------- Directories

  function pathUrl(path) {
    return '/directories/' + path.map(enc).join('/');
  }

  function parsePath(text) {
    return text.split('/').map(s => s.trim()).filter(s => s.length > 0);
  }

  async function showDirectoryRoot() {
    // Built aside and swapped in whole, so that a slower earlier call cannot mix into a later one.
    const generation = ++app.directoryGeneration;
    const path = parsePath($('#dir-root').value);
    const tree = h('ul', { id: 'dir-tree', class: 'tree' });
    if (path.length === 0) {
      await appendChildren(tree, []);
    } else {
      const info = await api(pathUrl(path));
      tree.append(directoryItem(path, info, true));
      await expand($('li', tree));
    }
    if (generation === app.directoryGeneration) $('#dir-tree').replaceWith(tree);
  }

  function directoryItem(path, info, isRoot) {
    const name = isRoot ? '/' + path.join('/') : path[path.length - 1];
    const li = h('li', { 'data-path': JSON.stringify(path) });
    li.append(h('div', { class: 'dir-line' },
      h('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false', 'aria-label': `Expand ${name}`, onclick: () => toggle(li) }, '▸'),
      h('span', { class: 'dir-name mono' }, name),
      h('span', { class: 'mono', title: 'key prefix (hex)' }, info ? `0x${info.prefix}` : '…'),
      h('span', {}, info ? (info.layer ? `layer ${info.layer}` : 'no layer') : ''),
      info && info.partition ? h('span', { class: 'tag' }, 'partition') : null));
    return li;
  }

  async function toggle(li) {
    const button = $('button.toggle', li);
    if (button.getAttribute('aria-expanded') === 'true') {
      button.setAttribute('aria-expanded', 'false');
      button.textContent = '▸';
      const children = $(':scope > ul', li);
      if (children) children.remove();
      return;
    }
    await guarded('directories', () => expand(li));
  }

  async function expand(li) {
    const button = $('button.toggle', li);
    button.setAttribute('aria-expanded', 'true');
    button.textContent = '▾';
    const ul = h('ul', {});
    li.append(ul);
    await appendChildren(ul, JSON.parse(li.dataset.path));
  }

  /** Appends one page of children of {@code path} to {@code ul}, with a button for the next page. */
  async function appendChildren(ul, path, startAfter) {
    const base = path.length ? `${pathUrl(path)}?list=true&` : '/directories?';
    const page = await api(`${base}limit=${DIRECTORY_PAGE}` + (startAfter ? `&startAfter=${enc(startAfter)}` : ''));
    const infos = await Promise.all(page.names.map(n => api(pathUrl([...path, n])).catch(e => {
      if (e instanceof Unauthorized) throw e;
      return null;
    })));
    const more = $(':scope > li.more', ul);
    if (more) more.remove();
    page.names.forEach((n, i) => ul.append(directoryItem([...path, n], infos[i], false)));
    if (page.names.length === 0 && !startAfter) ul.append(h('li', { class: 'muted' }, 'No subdirectory.'));
    if (page.hasMore) {
      ul.append(h('li', { class: 'more' }, h('button', {
        type: 'button',
        onclick: () => guarded('directories', () => appendChildren(ul, path, page.nextStartAfter)),
      }, `Show the next ${DIRECTORY_PAGE}`)));
    }
  }

  // ---------------------------------------------------------------- Health and throughput

  function parseMetrics(text) {
    const samples = [];
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/);
      if (!m) continue;
      const labels = {};
      for (const l of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[l[1]] = l[2].replace(/\\(.)/g, (x, c) => (c === 'n' ? '\n' : c));
      }
      samples.push({ name: m[1], labels, value: Number(m[3]) });
    }
    return samples;
  }

  function summarize(samples) {
    const routes = new Map();
    const actions = new Map();
    const lockEvents = {};
    const waits = new Map();
    for (const s of samples) {
      const l = s.labels;
      if (s.name.startsWith('fdbcoord_acquire_wait_seconds')) {
        const w = waits.get(l.status) || { status: l.status, count: 0, sum: 0, buckets: new Map() };
        if (s.name.endsWith('_count')) w.count = s.value;
        else if (s.name.endsWith('_sum')) w.sum = s.value;
        else if (s.name.endsWith('_bucket') && l.le) w.buckets.set(l.le, s.value);
        waits.set(l.status, w);
        continue;
      }
      if (s.name.startsWith('fdbcoord_http_requests_seconds')) {
        const key = `${l.route} ${l.status}`;
        const r = routes.get(key) || { route: l.route, status: l.status, count: 0, sum: 0, buckets: new Map() };
        if (s.name.endsWith('_count')) r.count = s.value;
        else if (s.name.endsWith('_sum')) r.sum = s.value;
        else if (s.name.endsWith('_bucket') && l.le) r.buckets.set(l.le, s.value);
        routes.set(key, r);
      } else if (s.name.startsWith('fdbcoord_requests_seconds')) {
        const key = `${l.address} ${l.action} ${l.outcome}`;
        const a = actions.get(key) || { address: l.address, action: l.action, outcome: l.outcome, count: 0, sum: 0 };
        if (s.name.endsWith('_count')) a.count = s.value;
        else if (s.name.endsWith('_sum')) a.sum = s.value;
        actions.set(key, a);
      } else if (s.name === 'fdbcoord_lock_events_total') {
        lockEvents[l.type] = s.value;
      }
    }
    return { routes, actions, waits, lockEvents, at: performance.now() };
  }

  // The requests answered between two scrapes, by latency bucket (upper bound in seconds,
  // cumulative as Prometheus exports them), all routes together.
  function bucketsSince(prev, now, kind = 'routes') {
    const sums = new Map();
    for (const [k, r] of now[kind]) {
      const before = (prev[kind].get(k) || { buckets: new Map() }).buckets;
      for (const [le, n] of r.buckets) {
        sums.set(le, (sums.get(le) || 0) + Math.max(0, n - (before.get(le) || 0)));
      }
    }
    return sorted(sums);
  }

  function sorted(buckets) {
    return [...buckets].map(([le, n]) => ({ le: le === '+Inf' ? Infinity : Number(le), n }))
      .sort((a, b) => a.le - b.le);
  }

  // Prometheus's histogram_quantile: linear within the bucket that holds the q-th request, in ms.
  function quantile(buckets, q) {
    if (buckets.length === 0) return 0;
    const total = buckets[buckets.length - 1].n;
    if (total === 0) return 0;
    const rank = q * total;
    let lower = 0;
    let below = 0;
    for (const b of buckets) {
      if (b.n >= rank) {
        if (b.le === Infinity) return lower * 1000;
        const within = b.n - below;
        return (lower + (b.le - lower) * (within === 0 ? 0 : (rank - below) / within)) * 1000;
      }
      lower = b.le;
      below = b.n;
    }
    return lower * 1000;
  }

  function push(series, value) {
    series.push(value);
    while (series.length > CHART_POINTS) series.shift();
  }

  async function sampleMetrics() {
    const now = summarize(parseMetrics(await api('/metrics', { text: true })));
    const prev = app.metrics.previous;
    now.rates = new Map();
    if (prev) {
      const seconds = Math.max(0.001, (now.at - prev.at) / 1000);
      let http = 0;
      let bus = 0;
      for (const [k, r] of now.routes) {
        const rate = Math.max(0, r.count - (prev.routes.get(k) || { count: 0 }).count) / seconds;
        now.rates.set('route ' + k, rate);
        http += rate;
      }
      for (const [k, a] of now.actions) {
        const rate = Math.max(0, a.count - (prev.actions.get(k) || { count: 0 }).count) / seconds;
        now.rates.set('action ' + k, rate);
        bus += rate;
      }
      const window = bucketsSince(prev, now);
      push(app.metrics.series.http, http);
      push(app.metrics.series.bus, bus);
      push(app.metrics.series.p50, quantile(window, 0.5));
      push(app.metrics.series.p99, quantile(window, 0.99));
      const waited = bucketsSince(prev, now, 'waits');
      push(app.metrics.series.wait50, quantile(waited, 0.5));
      push(app.metrics.series.wait99, quantile(waited, 0.99));
      const locks = Object.entries(now.lockEvents)
        .reduce((sum, [type, n]) => sum + Math.max(0, n - (prev.lockEvents[type] || 0)), 0);
      push(app.metrics.series.locks, locks / seconds);
    }
    app.metrics.previous = now;
    if (app.view === 'health') renderMetrics();
  }

  async function refreshHealth() {
    const out = $('#health-status');
    try {
      const health = await api('/health');
      out.textContent = `Store ${health.status}: ${health.store}, one write in ${number(health.writeMs, 2)} ms.`;
    } catch (e) {
      if (e instanceof Unauthorized) throw e;
      out.textContent = `Store DOWN: ${e.message}`;
    }
    renderMetrics();
  }

  /** A small line chart of the samples so far (at most CHART_POINTS), drawn as inline SVG. */
  function chart(title, unit, series, second) {
    const all = series.concat(second ? second.values : []);
    const max = Math.max(1e-9, ...all);
    const width = 200;
    const height = 50;
    const points = values => values.map((v, i) => {
      const x = values.length < 2 ? width : (i / (values.length - 1)) * width;
      return `${x.toFixed(1)},${(height - (v / max) * (height - 2) - 1).toFixed(1)}`;
    }).join(' ');
    const last = series.length ? series[series.length - 1] : null;
    const graphic = svg('svg', { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'none', role: 'img',
      'aria-label': `${title}: last ${number(last, 1)} ${unit}` });
    graphic.append(svg('line', { x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5, stroke: 'currentColor', 'stroke-width': 1 }));
    if (series.length) graphic.append(svg('polyline', { points: points(series) }));
    if (second && second.values.length) graphic.append(svg('polyline', { class: 'second', points: points(second.values) }));
    const span = Math.max(0, series.length - 1) * METRICS_PERIOD_MS / 1000;
    const lastSecond = second && second.values.length ? second.values[second.values.length - 1] : null;
    return h('figure', { class: 'chart', 'data-chart': title },
      h('figcaption', {}, h('span', {}, title),
        h('span', { class: 'value' }, last === null ? 'collecting…'
          : `${number(last, 1)}${second ? ` / ${number(lastSecond, 1)}` : ''} ${unit}`)),
      graphic,
      h('div', { class: 'axis' }, h('span', {}, `${span} s ago`),
        h('span', {}, second ? `solid ${second.first}, dashed ${second.label}` : `max ${number(max < 1e-6 ? 0 : max, 1)} ${unit}`),
        h('span', {}, 'now')));
  }

  function renderMetrics() {
    const s = app.metrics.series;
    const p99 = s.p99;
    $('#charts').replaceChildren(
      chart('HTTP requests', 'per s', s.http),
      chart('Event-bus requests', 'per s', s.bus),
      chart('HTTP latency p50 / p99 (all routes, between refreshes; without acquires\' waits)', 'ms', s.p50,
        { first: 'p50', label: 'p99', values: p99 }),
      chart('Acquire wait p50 / p99 (HTTP acquires, until granted or refused)', 'ms', s.wait50,
        { first: 'p50', label: 'p99', values: s.wait99 }),
      chart('Lock events', 'per s', s.locks));
    const m = app.metrics.previous;
    if (!m) return;
    const rate = key => (m.rates && m.rates.has(key) ? number(m.rates.get(key), 1) : '—');
    const routes = [...m.routes.values()].sort((a, b) => b.count - a.count);
    $('#routes-table tbody').replaceChildren(...routes.map(r => h('tr', {},
      h('td', { class: 'mono' }, r.route), h('td', {}, r.status),
      h('td', { class: 'num' }, number(r.count)), h('td', { class: 'num' }, rate(`route ${r.route} ${r.status}`)),
      h('td', { class: 'num' }, number(quantile(sorted(r.buckets), 0.5), 2)),
      h('td', { class: 'num' }, number(quantile(sorted(r.buckets), 0.95), 2)),
      h('td', { class: 'num' }, number(quantile(sorted(r.buckets), 0.99), 2)))));
    const actions = [...m.actions.values()].sort((a, b) => b.count - a.count);
    $('#actions-table tbody').replaceChildren(...actions.map(a => h('tr', {},
      h('td', { class: 'mono' }, a.address), h('td', {}, a.action), h('td', {}, a.outcome),
      h('td', { class: 'num' }, number(a.count)), h('td', { class: 'num' }, rate(`action ${a.address} ${a.action} ${a.outcome}`)),
      h('td', { class: 'num' }, a.count ? number((a.sum / a.count) * 1000, 2) : '—'))));
    const events = Object.entries(m.lockEvents);
    $('#lock-events').textContent = events.length ? events.map(([t, n]) => `${t} ${number(n)}`).join(' · ') : 'none yet';
  }

  // ---------------------------------------------------------------- wiring

  function wire() {
    $('#login-form').addEventListener('submit', login);
    window.addEventListener('hashchange', showView);
    $('#mutex-search-form').addEventListener('submit', e => { e.preventDefault(); watch($('#mutex-search').value); });
    $('#mutex-search').addEventListener('input', renderHeld);
    $('#held-filter-clear').addEventListener('click', () => {
      $('#mutex-search').value = '';
      renderHeld();
      $('#mutex-search').focus();
    });
    $('#held-prev').addEventListener('click', () => {
      app.held.index = Math.max(0, app.held.index - 1);
      guarded('mutexes', loadHeld);
    });
    $('#held-next').addEventListener('click', () => {
      if (!app.held.next) return;
      app.held.after[app.held.index + 1] = app.held.next;
      app.held.index++;
      guarded('mutexes', loadHeld);
    });
    $('#ns-prev').addEventListener('click', () => {
      app.namespaces.page = Math.max(0, app.namespaces.page - 1);
      guarded('interners', renderNamespaces);
    });
    $('#ns-next').addEventListener('click', () => {
      app.namespaces.page++;
      guarded('interners', renderNamespaces);
    });
    $('#str-prev').addEventListener('click', () => {
      app.strings.index = Math.max(0, app.strings.index - 1);
      guarded('interners', loadStrings);
    });
    $('#str-next').addEventListener('click', () => {
      if (!app.strings.next) return;
      app.strings.after[app.strings.index + 1] = app.strings.next;
      app.strings.index++;
      guarded('interners', loadStrings);
    });
    $('#ns-lookup-form').addEventListener('submit', lookup);
    $('#dir-form').addEventListener('submit', e => { e.preventDefault(); guarded('directories', showDirectoryRoot); });
  }

  /**
   * What primitives.js (the election, semaphore and read-write lock views) uses of this page: its helpers, its views
   * and its WebSocket. It loads after this file and registers before start() runs (on DOMContentLoaded).
   */
  window.fdbcoordDashboard = {
    h, $, api, guarded, showError, clock, enc,
    addView(name, view) { views[name] = view; },
    addExtension(extension) { app.extensions.push(extension); },
    socket: () => (app.socket && app.socket.readyState === WebSocket.OPEN ? app.socket : null),
  };

  wire();
  // After the deferred scripts (primitives.js registers its views and socket hooks), before anything is shown.
  document.addEventListener('DOMContentLoaded', start);
})();

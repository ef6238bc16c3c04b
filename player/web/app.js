// The player's shell: live updates (server-sent events), the session picker, navigation
// and the hash router (#/, #/s/<id>, #/s/<id>/tools[/<tool>], #/s/<id>/batch,
// #/s/<id>/traffic, #/s/<id>/timeline, #/s/<id>/files, #/s/<id>/data).

import { h, typing } from './util.js';
import { state, emit, sessionById, sessionState } from './state.js';
import { renderSessions } from './sessions.js';
import { renderScreen } from './screen.js';
import { renderTools } from './tools.js';
import { renderBatch } from './batch.js';
import { renderTraffic } from './traffic.js';
import { renderTimeline } from './timeline.js';
import { renderFiles } from './files.js';
import { renderData } from './data.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const picker = document.getElementById('session-select');
const live = document.getElementById('live');

const pages = [
  { key: 'sessions', label: 'Sessions', path: () => '#/' },
  { key: 'screen', label: 'Screen', path: (id) => `#/s/${encodeURIComponent(id)}` },
  { key: 'tools', label: 'Tools', path: (id) => `#/s/${encodeURIComponent(id)}/tools` },
  { key: 'batch', label: 'Batch', path: (id) => `#/s/${encodeURIComponent(id)}/batch` },
  { key: 'traffic', label: 'Traffic', path: (id) => `#/s/${encodeURIComponent(id)}/traffic` },
  { key: 'timeline', label: 'Timeline', path: (id) => `#/s/${encodeURIComponent(id)}/timeline` },
  { key: 'files', label: 'Files', path: (id) => `#/s/${encodeURIComponent(id)}/files` },
  { key: 'data', label: 'Data', path: (id) => `#/s/${encodeURIComponent(id)}/data` },
];

function parse(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 's' || !parts[1]) return { page: 'sessions' };
  const id = parts[1];
  switch (parts[2]) {
    case undefined: return { page: 'screen', id };
    case 'tools': return { page: 'tools', id, tool: parts.slice(3).join('/') || null };
    case 'batch': return { page: 'batch', id };
    case 'traffic': return { page: 'traffic', id };
    case 'timeline': return { page: 'timeline', id };
    case 'files': return { page: 'files', id };
    case 'data': return { page: 'data', id };
  }
  return { page: 'sessions' };
}

// defaultSession is the session pages without one in the address work on.
function defaultSession() {
  if (state.sessionId && sessionById(state.sessionId)) return state.sessionId;
  const s = state.sessions.find((x) => x.state === 'connected') || state.sessions[0];
  return s ? s.id : null;
}

function drawNav(route) {
  nav.textContent = '';
  const sid = route.id || defaultSession();
  pages.forEach((p, i) => {
    const needs = p.key !== 'sessions';
    const a = h('a', { href: needs && !sid ? '#/' : p.path(sid), class: route.page === p.key ? 'on' : '', title: `${p.label} (${i + 1})`,
      'aria-current': route.page === p.key ? 'page' : null, 'aria-disabled': needs && !sid ? 'true' : null, dataset: { page: p.key } }, p.label);
    nav.append(a);
  });
}

function drawPicker() {
  const sid = parse(location.hash).id || defaultSession();
  picker.textContent = '';
  if (!state.sessions.length) picker.append(h('option', { value: '' }, 'no session'));
  for (const s of state.sessions) {
    const st = sessionState(s);
    picker.append(h('option', { value: s.id }, `${s.label ? s.label + ' · ' : ''}${s.appName || s.appId} · ${s.id}${st === 'connected' ? '' : ` (${st === 'unknown' ? 'state unknown' : st})`}`));
  }
  if (sid) picker.value = sid;
  picker.disabled = !state.sessions.length;
}

picker.addEventListener('change', () => {
  const r = parse(location.hash);
  const id = picker.value;
  state.sessionId = id;
  const page = pages.find((p) => p.key === (r.page === 'sessions' ? 'screen' : r.page));
  location.hash = page.path(id);
});

let cleanup = null;
let rendered = null;

function route() {
  const r = parse(location.hash);
  if (r.id) state.sessionId = r.id;
  drawNav(r);
  drawPicker();
  const key = location.hash;
  if (key === rendered) return;
  const prev = rendered === null ? null : parse(rendered);
  rendered = key;
  if (prev && prev.page === 'tools' && r.page === 'tools' && prev.id === r.id && cleanup?.retarget) {
    cleanup.retarget(r.tool);
    return;
  }
  if (cleanup) cleanup();
  cleanup = null;
  main.textContent = '';
  const view = {
    sessions: () => renderSessions(main),
    screen: () => renderScreen(main, r.id),
    tools: () => renderTools(main, r.id, r.tool),
    batch: () => renderBatch(main, r.id),
    traffic: () => renderTraffic(main, r.id),
    timeline: () => renderTimeline(main, r.id),
    files: () => renderFiles(main, r.id),
    data: () => renderData(main, r.id),
  }[r.page];
  cleanup = view();
  document.title = `${pages.find((p) => p.key === r.page).label} · ansight player`;
}

// Live updates, and what the page does when the host goes away. The first message of every
// event stream is the full session list. When the stream ends, a request tells why: no
// answer (the host stopped: a banner says so, the sessions grey out, and the page tries
// again until a host answers, then redraws), or 401 (this tab's access ended: the host
// came back with a new token; the banner says how to get in again). Either way the
// sessions' last known states may no longer hold: they show as unknown until the host
// sends them again.
const banner = document.getElementById('banner');
let firstSessions = true;
let source = null;
let offline = false;
let lockedOut = false;
let attempts = 0;

function showBanner(kind, title, text, command) {
  banner.textContent = '';
  banner.className = 'banner banner-' + kind;
  banner.append(h('strong', title), ' ', text, command ? h('code', command) : null);
  banner.hidden = false;
}

// hostGone marks the sessions' states unknown (or known again) and redraws what shows them.
function hostGone(gone) {
  if (state.hostGone === gone) return;
  state.hostGone = gone;
  drawPicker();
  emit('host', gone);
}

function goOffline() {
  if (lockedOut) return;
  offline = true;
  hostGone(true);
  document.body.classList.add('offline');
  live.classList.add('off');
  live.textContent = 'offline';
  live.title = 'Live updates: the host does not answer';
  showBanner('gone', 'The host is not running.', 'This page reconnects by itself once it is back; start it with ', 'ansight host run');
}

function lockOut() {
  if (lockedOut) return;
  lockedOut = true;
  source?.close();
  hostGone(true);
  document.body.classList.add('offline');
  live.classList.add('off');
  live.textContent = 'locked out';
  live.title = 'This page\'s access ended';
  showBanner('locked', 'This page\'s access ended:', 'the host came back with a new access token, or it was renewed. ' +
    'Open the player again from a terminal on this machine: ', 'ansight player open');
}

// archive names the archive this player shows, when it serves one with no host behind it
// ('ansight player --archive'; /api/status says so): nothing is live, and the indicator
// says what it reads instead.
let archive = '';

async function learnArchive() {
  try {
    const res = await fetch('/api/status', { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
    if (res.ok) archive = (await res.json()).archive || '';
  } catch { /* no answer: the stream's failure says so */ }
  document.body.classList.toggle('archive', archive !== '');
}

function backOnline() {
  attempts = 0;
  if (archive) {
    live.classList.add('off');
    live.textContent = 'archive';
    live.title = `Reading the archive ${archive}, with no host: nothing here is live`;
  } else {
    live.classList.remove('off');
    live.textContent = 'live';
    live.title = 'Live updates: connected';
  }
  if (!offline) return;
  offline = false;
  hostGone(false);
  document.body.classList.remove('offline');
  banner.hidden = true;
  state.indexes.clear(); // the app may have reconnected with another catalog
  rendered = null;       // redraw the page: what it showed may have failed meanwhile
  route();
}

// probe asks the player whether it answers, after the stream ended.
async function probe() {
  let res = null;
  try {
    res = await fetch('/api/status', { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
  } catch { /* no answer: the host is gone */ }
  if (res?.status === 401) {
    lockOut();
    return;
  }
  if (res?.ok) {
    connect();
    return;
  }
  goOffline();
  attempts++;
  setTimeout(probe, Math.min(1000 * attempts, 5000));
}

function connect() {
  if (lockedOut) return;
  const es = new EventSource('/api/events');
  source = es;
  es.addEventListener('open', backOnline);
  es.addEventListener('error', () => {
    es.close();
    if (source !== es) return;
    source = null;
    live.classList.add('off');
    live.title = 'Live updates: reconnecting…';
    setTimeout(probe, attempts ? 1000 : 200);
  });
  es.addEventListener('sessions', (m) => {
    state.sessions = JSON.parse(m.data).sessions || [];
    drawPicker();
    drawNav(parse(location.hash));
    if (firstSessions) {
      firstSessions = false;
      route();
    }
    emit('sessions', state.sessions);
  });
  es.addEventListener('traffic', (m) => emit('traffic', JSON.parse(m.data)));
  es.addEventListener('frame', (m) => {
    const f = JSON.parse(m.data);
    state.frames.set(f.sessionId, f);
    emit('frame', f);
  });
}

// A request refused for the token (util.js api) means the same as a refused stream.
window.addEventListener('ansight-locked-out', lockOut);

document.addEventListener('keydown', (e) => {
  if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  const n = Number(e.key);
  if (n >= 1 && n <= pages.length) {
    const link = nav.children[n - 1];
    if (link && link.getAttribute('aria-disabled') !== 'true') {
      e.preventDefault();
      location.hash = link.getAttribute('href');
    }
  }
});

window.addEventListener('hashchange', route);
learnArchive().finally(connect); // before the stream opens: an archive's player never shows "live"
// Without the event stream (it failed, or is slow), show the page anyway.
setTimeout(() => { if (firstSessions) { firstSessions = false; route(); } }, 3000);

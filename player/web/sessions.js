// The sessions page: every session the host knows, live, and below them the recordings the
// host keeps of sessions it no longer holds (earlier runs of the host, imports), each
// opening on its timeline.

import { h, api, fmtAgo, fmtBytes, fmtTime, shortRev, policyBadge, debounce } from './util.js';
import { state, on, sessionState, hostGoneTitle } from './state.js';

export function renderSessions(main) {
  const body = h('tbody');
  const empty = h('div.empty', h('h2', 'No app is connected'),
    h('p', 'Start one: ', h('code', 'ansight demo --keep-running'), ' runs a demo app, or connect your own app with the SDK in local mode.'),
    h('p.muted', 'This page updates by itself when an app connects.'));
  const table = h('table.grid.sessions', h('thead', h('tr',
    ['App', 'Device', 'Platform', 'State', 'Grant', 'Catalog', 'Connected'].map((t) => h('th', { scope: 'col' }, t)))), body);
  const recBody = h('tbody');
  const recordings = h('section.recordings#recordings', h('div.page-head', h('h1', 'Recordings'),
    h('span.muted', 'sessions the host no longer holds, as recorded: open one to replay it')),
  h('table.grid.sessions.recorded', h('thead', h('tr',
    ['App', 'Device', 'Recorded', 'Records', 'Size', ''].map((t) => h('th', { scope: 'col' }, t)))), recBody));
  recordings.hidden = true;
  main.append(h('section.page', h('div.page-head', h('h1', 'Sessions'), h('span.muted#session-count')), table, empty, recordings));

  // drawRecordings lists the recordings of the sessions the list above does not show.
  const drawRecordings = debounce(async () => {
    let list;
    try {
      list = (await api('GET', '/api/recordings')).sessions || [];
    } catch {
      return; // a host that records nothing, or gone: the section stays hidden
    }
    const live = new Set(state.sessions.map((s) => s.id));
    const rows = list.filter((r) => !live.has(r.id));
    recBody.textContent = '';
    recordings.hidden = rows.length === 0;
    for (const r of rows) {
      const rec = r.recording || {};
      const open = () => { location.hash = `#/s/${encodeURIComponent(r.id)}/timeline`; };
      recBody.append(h('tr', { tabindex: 0, dataset: { recording: r.id }, onclick: open, onkeydown: (e) => { if (e.key === 'Enter') open(); } },
        h('td', h('div.strong', r.appName || r.appId), r.label ? h('div.small', { title: 'label (ansight session rename)' }, r.label) : null, h('div.muted.mono.small', r.id)),
        h('td', r.deviceName || '—', r.platform ? h('div.muted.small', r.platform) : null),
        h('td', { title: `${rec.firstAt} – ${rec.lastAt}` }, fmtAgo(rec.lastAt), h('div.muted.small', `${fmtTime(rec.firstAt)} – ${fmtTime(rec.lastAt)}`)),
        h('td.num', String(rec.records ?? '')),
        h('td.num', fmtBytes(rec.bytes)),
        h('td', rec.origin === 'import' ? h('span.badge', 'imported') : null)));
    }
  }, 200);

  const draw = () => {
    const focused = document.activeElement?.dataset?.session; // keep the keyboard's place
    body.textContent = '';
    const list = state.sessions;
    table.hidden = list.length === 0;
    empty.hidden = list.length !== 0;
    const connected = list.filter((s) => s.state === 'connected').length;
    main.querySelector('#session-count').textContent = state.hostGone
      ? `host gone · ${list.length} ${list.length === 1 ? 'session' : 'sessions'}, state unknown`
      : `${connected} connected · ${list.length - connected} disconnected`;
    for (const s of list) {
      const st = sessionState(s);
      const open = () => { location.hash = `#/s/${encodeURIComponent(s.id)}`; };
      const tr = h('tr', {
        class: st === 'connected' ? 'row-live' : 'row-gone', tabindex: 0, dataset: { session: s.id },
        onclick: open, onkeydown: (e) => { if (e.key === 'Enter') open(); },
      },
      h('td', h('div.strong', s.appName || s.appId), s.label ? h('div.small', { title: 'label (ansight session rename)' }, s.label) : null, h('div.muted.mono', s.appId + (s.appVersion ? ' · ' + s.appVersion : '')),
        h('div.muted.mono.small', s.id)),
      h('td', s.deviceName || '—', s.deviceId ? h('div.muted.mono.small', s.deviceId) : null),
      h('td', s.platform || '—', s.sdk ? h('div.muted.small', s.sdk) : null),
      h('td', h('span.badge.state-' + st, { title: st === 'unknown' ? hostGoneTitle : null }, st), s.appState ? h('div.muted.small', s.appState) : null),
      h('td', policyBadge(s.maxToolPolicy)),
      h('td', h('span.mono', { title: s.revision || '' }, shortRev(s.revision)), s.toolCount ? h('div.muted.small', `${s.toolCount} tools`) : null),
      h('td', { title: s.connectedAt }, fmtAgo(s.connectedAt),
        s.disconnectedAt ? h('div.muted.small', 'left ' + fmtAgo(s.disconnectedAt)) : null));
      body.append(tr);
    }
    if (focused) body.querySelector(`tr[data-session="${CSS.escape(focused)}"]`)?.focus();
  };
  draw();
  drawRecordings();
  const off = on('sessions', () => { draw(); drawRecordings(); });
  const offHost = on('host', draw);
  const timer = setInterval(draw, 15000); // relative times
  return () => { off(); offHost(); clearInterval(timer); };
}

// The sessions page: every session the host knows, live.

import { h, fmtAgo, shortRev, policyBadge } from './util.js';
import { state, on } from './state.js';

export function renderSessions(main) {
  const body = h('tbody');
  const empty = h('div.empty', h('h2', 'No app is connected'),
    h('p', 'Start one: ', h('code', 'ansight demo --keep-running'), ' runs a demo app, or connect your own app with the SDK in local mode.'),
    h('p.muted', 'This page updates by itself when an app connects.'));
  const table = h('table.grid.sessions', h('thead', h('tr',
    ['App', 'Device', 'Platform', 'State', 'Grant', 'Catalog', 'Connected'].map((t) => h('th', { scope: 'col' }, t)))), body);
  main.append(h('section.page', h('div.page-head', h('h1', 'Sessions'), h('span.muted#session-count')), table, empty));

  const draw = () => {
    const focused = document.activeElement?.dataset?.session; // keep the keyboard's place
    body.textContent = '';
    const list = state.sessions;
    table.hidden = list.length === 0;
    empty.hidden = list.length !== 0;
    const connected = list.filter((s) => s.state === 'connected').length;
    main.querySelector('#session-count').textContent = `${connected} connected · ${list.length - connected} disconnected`;
    for (const s of list) {
      const open = () => { location.hash = `#/s/${encodeURIComponent(s.id)}`; };
      const tr = h('tr', {
        class: s.state === 'connected' ? 'row-live' : 'row-gone', tabindex: 0, dataset: { session: s.id },
        onclick: open, onkeydown: (e) => { if (e.key === 'Enter') open(); },
      },
      h('td', h('div.strong', s.appName || s.appId), h('div.muted.mono', s.appId + (s.appVersion ? ' · ' + s.appVersion : '')),
        h('div.muted.mono.small', s.id)),
      h('td', s.deviceName || '—', s.deviceId ? h('div.muted.mono.small', s.deviceId) : null),
      h('td', s.platform || '—', s.sdk ? h('div.muted.small', s.sdk) : null),
      h('td', h('span.badge.state-' + s.state, s.state), s.appState ? h('div.muted.small', s.appState) : null),
      h('td', policyBadge(s.maxToolPolicy)),
      h('td', h('span.mono', { title: s.revision || '' }, shortRev(s.revision)), s.toolCount ? h('div.muted.small', `${s.toolCount} tools`) : null),
      h('td', { title: s.connectedAt }, fmtAgo(s.connectedAt),
        s.disconnectedAt ? h('div.muted.small', 'left ' + fmtAgo(s.disconnectedAt)) : null));
      body.append(tr);
    }
    if (focused) body.querySelector(`tr[data-session="${CSS.escape(focused)}"]`)?.focus();
  };
  draw();
  const off = on('sessions', draw);
  const timer = setInterval(draw, 15000); // relative times
  return () => { off(); clearInterval(timer); };
}

// What the app handed over in a session: crash reports of its crashed processes and
// annotated-feedback bundles, kept by the host in the session's directory. Shown on the
// session page when there are any, and refreshed when the session's counts change.

import { h, api, enc, fmtAgo, fmtTime, fmtBytes } from './util.js';
import { on, sessionById } from './state.js';

export function renderRecords(sid) {
  const box = h('section.records#records', { 'aria-label': 'Crash reports and annotations' });
  box.hidden = true;
  let seen = '';

  const file = (urls, path, label) => (urls[path] ? h('a', { href: urls[path], target: '_blank', rel: 'noopener' }, label) : h('span.mono', label));

  const load = async () => {
    const s = sessionById(sid);
    const key = s ? `${s.crashReports || 0}|${s.annotations || 0}` : '';
    if (key === seen) return;
    seen = key;
    if (!s || (!s.crashReports && !s.annotations)) { box.hidden = true; return; }
    let r;
    try {
      r = await api('GET', `/api/sessions/${enc(sid)}/records`);
    } catch (e) {
      box.hidden = false;
      box.textContent = '';
      box.append(h('div.error-card', h('strong', e.code || 'error'), ' ', e.message));
      return;
    }
    box.textContent = '';
    box.hidden = false;
    if (r.crashes.length) {
      const rows = r.crashes.map((c) => h('tr',
        h('td', { title: fmtTime(c.occurredAt) }, fmtAgo(c.occurredAt)),
        h('td', c.kind || '—', c.confidence ? h('div.muted.small', c.confidence) : null),
        h('td', c.platform || '—'),
        h('td.mono', c.message || '—', c.deliveredBy !== c.sessionId ? h('div.muted.small', 'delivered by ' + c.deliveredBy) : null),
        h('td', (c.files || []).map((f) => h('div', file(r.fileUrls, f.path, f.name), h('span.muted.small', ' ' + fmtBytes(f.sizeBytes)))))));
      box.append(h('h2', `Crash reports (${r.crashes.length})`),
        h('table.grid.crashes', h('thead', h('tr', ['Occurred', 'Kind', 'Platform', 'Message', 'Files'].map((t) => h('th', { scope: 'col' }, t)))), h('tbody', rows)));
    }
    if (r.annotations.length) {
      const rows = r.annotations.map((a) => h('tr',
        h('td', { title: fmtTime(a.capturedAt) }, fmtAgo(a.capturedAt)),
        h('td.mono', a.id),
        h('td', fmtBytes(a.sizeBytes)),
        h('td', file(r.fileUrls, a.path, a.fileName || a.id + '.ansightannotation'))));
      box.append(h('h2', `Annotations (${r.annotations.length})`),
        h('table.grid.annotations', h('thead', h('tr', ['Captured', 'Annotation', 'Size', 'Bundle'].map((t) => h('th', { scope: 'col' }, t)))), h('tbody', rows)));
    }
  };
  load();
  const off = on('sessions', load);
  return { el: box, close: off };
}

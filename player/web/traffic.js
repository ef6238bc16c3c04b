// The traffic page: every request and response of the session (type, tool, duration,
// size, compression saving) and every ASFT transfer (size, throughput), live.

import { h, api, enc, fmtBytes, fmtMs, fmtTime } from './util.js';
import { on } from './state.js';

const MAX_ROWS = 2000;

export function renderTraffic(main, sid) {
  const toolSel = h('select#traffic-tool', { 'aria-label': 'Tool' }, h('option', { value: '' }, 'all tools'));
  const outcomeSel = h('select#traffic-outcome', { 'aria-label': 'Outcome' },
    h('option', { value: '' }, 'any outcome'), h('option', { value: 'ok' }, 'ok'), h('option', { value: 'error' }, 'error'),
    h('option', { value: 'malformed' }, 'malformed'));
  const kindSel = h('select#traffic-kind', { 'aria-label': 'Kind' },
    h('option', { value: '' }, 'everything'), h('option', { value: 'calls' }, 'calls and transfers (no catalog queries)'),
    h('option', { value: 'request' }, 'requests'),
    h('option', { value: 'response' }, 'responses'), h('option', { value: 'transfer' }, 'transfers'),
    h('option', { value: 'denied' }, 'refused by the host (not sent)'));
  const pause = h('button.ghost', { type: 'button', 'aria-pressed': 'false' }, 'Pause');
  const stats = h('div.stats#traffic-stats');
  const body = h('tbody#traffic-body');
  const table = h('table.grid.traffic', h('thead', h('tr',
    ['time', '', 'type', 'tool', 'request', 'size', 'payload', 'compression', 'duration', 'outcome'].map((x) => h('th', { scope: 'col' }, x)))), body);
  const empty = h('p.muted', 'No traffic yet: calls from this page, the CLI or an agent show up here as they happen.');
  main.append(h('section.page.traffic-page',
    h('div.page-head', h('h1', 'Traffic'), h('span.muted.mono', sid), h('div.spacer'), pause),
    h('div.filters.inline', toolSel, outcomeSel, kindSel), stats, table, empty));

  const entries = [];
  const bySeq = new Map();
  const tools = new Set();
  let paused = false;
  const pending = [];

  const matches = (e) => (!toolSel.value || (e.toolIds || []).includes(toolSel.value)) &&
    (!outcomeSel.value || e.outcome === outcomeSel.value) && (!kindSel.value || e.kind === kindSel.value || (kindSel.value === 'calls' && !/^tool\.(query|catalog)$/.test(e.type)));

  const row = (e) => {
    const tool = (e.toolIds || []).length > 1 ? `batch: ${e.toolIds.join(', ')}` : (e.toolIds || [])[0] || '';
    // A denied entry never crossed the wire: the host refused it before sending.
    const dir = e.kind === 'request' ? '→' : e.kind === 'denied' ? '⊘' : '←';
    let size, payload, comp, dur;
    if (e.kind === 'transfer') {
      size = fmtBytes(e.receivedBytes);
      payload = e.sizeBytes >= 0 ? `of ${fmtBytes(e.sizeBytes)}` : '';
      comp = e.frames === 1 ? '1 frame' : `${e.frames || 0} frames`;
      dur = h('span', fmtMs(e.durationMs), e.bytesPerSecond ? h('div.muted.small', fmtBytes(e.bytesPerSecond) + '/s') : null);
    } else {
      size = fmtBytes(e.bytes);
      payload = fmtBytes(e.payloadBytes);
      comp = e.compressed ? h('span.badge.ok', { title: `${fmtBytes(e.encodedBytes)} on the wire for ${fmtBytes(e.payloadBytes)}` },
        `gzip −${Math.round(100 * (1 - e.encodedBytes / e.payloadBytes))}%`) : h('span.muted', '—');
      dur = e.kind === 'response' ? fmtMs(e.durationMs) : '';
    }
    const out = e.outcome === 'ok' ? h('span.badge.ok', 'ok') : h('span.badge.err', { title: e.errorCode || '' }, e.errorCode ? `${e.outcome}: ${e.errorCode}` : e.outcome);
    const typeCell = e.kind === 'transfer'
      ? h('td', h('span.badge.asft', 'ASFT'), ' ', e.artifactUrl ? h('a', { href: e.artifactUrl, target: '_blank', rel: 'noopener' }, e.fileName || e.transferId) : (e.fileName || ''))
      : e.kind === 'denied'
        ? h('td.mono', e.type, ' ', h('span.badge.err', { title: 'refused by the host before sending: the app never saw it' }, 'not sent'))
        : h('td.mono', e.type);
    const tr = h('tr', { class: 'k-' + e.kind + (e.outcome !== 'ok' ? ' bad' : ''), dataset: { seq: e.seq, kind: e.kind, type: e.type } },
      h('td.mono.small', { title: e.at }, fmtTime(e.at)), h('td.dir', dir), typeCell, h('td.mono', tool),
      h('td.mono.small', { title: e.requestId || e.transferId || '' }, (e.requestId || e.transferId || '').slice(0, 8)),
      h('td.num', size), h('td.num', payload), h('td', comp), h('td.num', dur), h('td', out));
    tr.hidden = !matches(e);
    return tr;
  };

  const drawStats = () => {
    let req = 0, res = 0, err = 0, bytes = 0, saved = 0, tr = 0, trBytes = 0;
    for (const e of entries) {
      if (e.kind === 'request') req++;
      if (e.kind === 'response') res++;
      if (e.outcome !== 'ok') err++;
      if (e.kind === 'transfer') { tr++; trBytes += e.receivedBytes || 0; } else bytes += e.bytes;
      if (e.compressed) saved += e.payloadBytes - e.encodedBytes;
    }
    stats.textContent = '';
    const stat = (label, v) => h('div.stat', h('div.stat-v', v), h('div.stat-l', label));
    stats.append(stat('requests', req), stat('responses', res), stat('errors', err), stat('message bytes', fmtBytes(bytes)),
      stat('saved by gzip', fmtBytes(saved)), stat('transfers', `${tr} · ${fmtBytes(trBytes)}`));
    empty.hidden = entries.length > 0;
    table.hidden = entries.length === 0;
  };

  const addTool = (e) => {
    for (const t of e.toolIds || []) {
      if (!tools.has(t)) {
        tools.add(t);
        const opts = [...toolSel.options].slice(1).map((o) => o.value);
        opts.push(t);
        opts.sort();
        const cur = toolSel.value;
        toolSel.length = 1;
        for (const o of opts) toolSel.append(h('option', { value: o }, o));
        toolSel.value = cur;
      }
    }
  };

  const add = (e, live) => {
    if (bySeq.has(e.seq)) return;
    bySeq.set(e.seq, e);
    entries.push(e);
    addTool(e);
    body.prepend(row(e)); // newest first
    while (body.rows.length > MAX_ROWS) body.lastElementChild.remove();
    if (live) drawStats();
  };

  const refilter = () => {
    for (const tr of body.rows) {
      const e = bySeq.get(Number(tr.dataset.seq));
      if (e) tr.hidden = !matches(e);
    }
  };
  toolSel.addEventListener('change', refilter);
  outcomeSel.addEventListener('change', refilter);
  kindSel.addEventListener('change', refilter);
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? `Resume` : 'Pause';
    pause.setAttribute('aria-pressed', String(paused));
    if (!paused) { pending.splice(0).forEach((e) => add(e, false)); drawStats(); }
  });

  // The live stream may deliver entries before the log arrives: sequence numbers merge both.
  const off = on('traffic', (e) => {
    if (e.sessionId !== sid) return;
    if (paused) { pending.push(e); pause.textContent = `Resume (${pending.length})`; return; }
    add(e, true);
  });
  api('GET', `/api/sessions/${enc(sid)}/traffic`).then((t) => {
    const early = entries.splice(0);
    bySeq.clear();
    body.textContent = '';
    for (const e of [...t.entries, ...early].sort((a, b) => a.seq - b.seq)) add(e, false);
    drawStats();
  }, (e) => { empty.textContent = e.message; });
  drawStats();
  return off;
}

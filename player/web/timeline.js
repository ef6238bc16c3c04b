// The session timeline: a recording replayed. The screen frames the app streamed, scrubbable
// in time, above lanes of what happened meanwhile on the same time axis — logs, network
// requests, tool calls, touches — and the list of those events around the cursor. Clicking
// a call shows its request and response; clicking anything moves the cursor there. The
// timeline of a connected session grows as the host records it (and the cursor follows the
// end unless moved back); a disconnected or imported one is replayed as kept.

import { h, api, enc, fmtTime, fmtMs, fmtBytes, debounce } from './util.js';
import { on, sessionById, sessionState, hostGoneTitle } from './state.js';
import { jsonTree } from './jsontree.js';

// What the timeline reads of a recording, and how much of it at most: a page beyond stops
// loading with a notice rather than exhausting the tab.
const KINDS = 'frame,log,network,traffic,touch,state,appState';
const PAGE = 5000;
const MAX_RECORDS = 60000;
const LIST_AROUND = 80; // events listed on each side of the cursor

const LANES = [
  { key: 'frame', label: 'Screen' },
  { key: 'log', label: 'Logs' },
  { key: 'network', label: 'Network' },
  { key: 'call', label: 'Tool calls' },
  { key: 'touch', label: 'Touches' },
];

export function renderTimeline(main, sid) {
  const title = h('h1', 'Timeline');
  const stateBadge = h('span.badge');
  const followBtn = h('button.small#tl-follow', { type: 'button', 'aria-pressed': 'true', title: 'Keep the cursor at the newest record' }, 'Following');
  followBtn.hidden = true;
  const summary = h('span.muted.small#tl-summary');
  // Save as flow: the calls from the mark (the recording's start until one is set) to the
  // cursor, as an ansight.flow/v1 file (docs/flows.md).
  const markBtn = h('button.small#tl-mark', { type: 'button', title: 'Mark the start of the range to save as a flow at the cursor' }, 'Mark start');
  // Disabled until the records are loaded: before, the cursor is at 0 and the range empty.
  const saveFlowBtn = h('button.small#tl-save-flow', { type: 'button', disabled: true, title: 'Save the calls from the mark to the cursor as a flow (YAML)' }, 'Save as flow');
  const head = h('div.page-head', title, h('span.muted.mono', sid), stateBadge, h('div.spacer'), summary, markBtn, saveFlowBtn, followBtn);

  const frameImg = h('img#tl-frame', { alt: 'Screen of the app at the cursor' });
  const frameEmpty = h('div.placeholder', 'The app streamed no screen frames in this recording.');
  const frameInfo = h('div.muted.small#tl-frame-info');
  const prevBtn = h('button.small#tl-prev', { type: 'button', title: 'Previous frame (,)' }, '◀ frame');
  const nextBtn = h('button.small#tl-next', { type: 'button', title: 'Next frame (.)' }, 'frame ▶');
  const screen = h('div.panel.tl-screen', h('div.screen-box', frameEmpty, frameImg, frameInfo, h('div.row-buttons', prevBtn, nextBtn)));

  const details = h('div.panel.tl-details#tl-details', h('div.panel-head', h('h2', 'Details')),
    h('div.tl-details-body', h('p.muted', 'Click a call, a request or a log line.')));
  const detailsBody = details.querySelector('.tl-details-body');

  const cursorLine = h('div.tl-cursor');
  const track = h('div.tl-track', cursorLine);
  const laneBoxes = new Map();
  for (const l of LANES) {
    const box = h('div.tl-lane-track', { dataset: { lane: l.key } });
    laneBoxes.set(l.key, box);
    track.append(h('div.tl-lane', h('div.tl-lane-label', l.label, h('span.muted.small', { dataset: { count: l.key } })), box));
  }
  const scrub = h('input#tl-scrub', { type: 'range', min: '0', max: '0', step: '1', value: '0', 'aria-label': 'Time' });
  const axis = h('div.tl-axis', h('span#tl-start'), h('span#tl-at.strong'), h('span#tl-end'));
  const timeline = h('div.panel.tl-timeline', track, h('div.tl-scrub-row', h('div.tl-lane-label', 'Time'), h('div.tl-scrub-box', scrub, axis)));

  const listBody = h('tbody#tl-list');
  const list = h('table.grid.tl-events', h('thead', h('tr', ['time', 'what', ''].map((x) => h('th', { scope: 'col' }, x)))), listBody);
  const status = h('div.status');

  main.append(h('section.page.timeline-page', head, status, h('div.tl-top', screen, details), timeline, h('div.tl-events-box', list)));

  // The recording, as loaded: frames and lane items sorted by time (ms since the epoch).
  const frames = [];          // { t, rec }
  const items = [];           // { t, lane, rec, text, call? }
  const calls = new Map();    // requestId → call item
  let lastSeq = 0;
  let start = 0, end = 0;     // the time axis
  let cursor = 0;             // ms
  let following = false;      // the cursor sticks to the end
  let selected = null;        // item shown in details
  let truncated = false;
  let loading = false;
  let closed = false;
  let first = true;

  const fileURL = (rec) => `/api/sessions/${enc(sid)}/recording/${rec.seq}/file`;

  // add files one record into the model.
  const add = (rec) => {
    const t = Date.parse(rec.at);
    if (Number.isNaN(t)) return;
    const d = rec.data || {};
    switch (rec.kind) {
      case 'frame':
        if (rec.blob) frames.push({ t, rec });
        return;
      case 'log':
        items.push({ t, lane: 'log', rec, text: rec.text, level: rec.level });
        return;
      case 'state':
        items.push({ t, lane: 'log', rec, text: 'session ' + rec.text, level: 'event' });
        return;
      case 'appState':
        items.push({ t, lane: 'log', rec, text: 'app ' + rec.text, level: 'event' });
        return;
      case 'network':
        items.push({ t, lane: 'network', rec, text: rec.text, bad: d.statusCode >= 400 || !!d.errorType });
        return;
      case 'touch':
        items.push({ t, lane: 'touch', rec, text: 'touch ' + rec.text });
        return;
      case 'traffic':
        addTraffic(t, rec, d);
    }
  };

  // Tool calls and batches: the request opens a call, its response (same request id)
  // completes it; a call the host refused is one of its own.
  const addTraffic = (t, rec, d) => {
    const callType = d.type === 'tool.call' || d.type === 'tool.batch';
    if (d.direction === 'request' && callType) {
      const c = { t, lane: 'call', rec, call: { req: rec, res: null }, text: `${d.type} ${(d.toolIds || []).join(', ')}` };
      calls.set(d.requestId, c);
      items.push(c);
    } else if (d.direction === 'response' && calls.has(d.requestId)) {
      const c = calls.get(d.requestId);
      c.call.res = rec;
      c.bad = d.outcome !== 'ok';
      c.text = `${c.rec.data.type} ${(d.toolIds || []).join(', ')} · ${d.outcome}${d.errorCode ? ' ' + d.errorCode : ''} · ${fmtMs(d.durationMs)}`;
    } else if (d.direction === 'denied') {
      items.push({ t, lane: 'call', rec, call: { req: rec, res: null, denied: true }, bad: true,
        text: `${d.type} ${(d.toolIds || []).join(', ')} · refused by the host: ${d.errorCode || ''}` });
    }
  };

  const span = () => Math.max(1, end - start);
  const pct = (t) => ((t - start) / span()) * 100;

  // frameAt is the index of the last frame at or before t (the first one before any).
  const frameAt = (t) => {
    let lo = 0, hi = frames.length - 1, best = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (frames[mid].t <= t) { best = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return best;
  };
  // itemAt is the index of the last item at or before t, or -1.
  const itemAt = (t) => {
    let lo = 0, hi = items.length - 1, best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (items[mid].t <= t) { best = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return best;
  };

  const drawLanes = () => {
    for (const [key, box] of laneBoxes) {
      box.textContent = '';
      const mine = key === 'frame' ? frames : items.filter((i) => i.lane === key);
      main.querySelector(`[data-count="${key}"]`).textContent = ' ' + mine.length;
      // One marker per pixel column is plenty: a long recording stays light.
      const width = box.clientWidth || 1000;
      const used = new Set();
      for (const it of mine) {
        const x = Math.round((pct(it.t) / 100) * width);
        if (used.has(x) && !(it.call)) continue;
        used.add(x);
        const m = h(it.call ? 'button.tl-mark.call' : 'span.tl-mark', {
          title: `${fmtTime(new Date(it.t).toISOString())} ${it.text || (it.rec.text || '')}`,
          dataset: { seq: it.rec.seq }, type: it.call ? 'button' : null, 'aria-label': it.call ? it.text : null,
        });
        m.style.left = pct(it.t) + '%'; // CSSOM: the CSP forbids style attributes
        if (it.bad) m.classList.add('bad');
        if (it.level === 'error' || it.level === 'warn') m.classList.add(it.level);
        if (it.call) m.addEventListener('click', (e) => { e.stopPropagation(); select(it); setCursor(it.t, false); });
        box.append(m);
      }
    }
  };

  const drawAxis = () => {
    scrub.max = String(span());
    main.querySelector('#tl-start').textContent = start ? fmtTime(new Date(start).toISOString()) : '';
    main.querySelector('#tl-end').textContent = end ? fmtTime(new Date(end).toISOString()) : '';
    const callsN = items.filter((i) => i.call).length;
    summary.textContent = `${frames.length} frames · ${items.length - callsN} events · ${callsN} calls · ${fmtMs(end - start)}` +
      (truncated ? ` · first ${MAX_RECORDS} records only` : '');
  };

  const showFrame = () => {
    frameEmpty.hidden = frames.length > 0;
    frameImg.hidden = frames.length === 0;
    prevBtn.disabled = nextBtn.disabled = frames.length < 2;
    if (!frames.length) { frameInfo.textContent = ''; return; }
    const i = frameAt(cursor);
    const f = frames[i];
    const url = fileURL(f.rec);
    if (frameImg.getAttribute('src') !== url) frameImg.src = url;
    frameImg.dataset.seq = f.rec.seq;
    const d = f.rec.data || {};
    frameInfo.textContent = `frame ${i + 1} of ${frames.length} · ${fmtTime(f.rec.at)}` + (d.width ? ` · ${d.width} × ${d.height}` : '') +
      (f.rec.blobBytes ? ` · ${fmtBytes(f.rec.blobBytes)}` : '');
  };

  const drawList = () => {
    listBody.textContent = '';
    const at = itemAt(cursor);
    const from = Math.max(0, at - LIST_AROUND), to = Math.min(items.length, at + LIST_AROUND + 1);
    for (let i = from; i < to; i++) {
      const it = items[i];
      const tr = h('tr', { class: (i === at ? 'now ' : '') + (i > at ? 'later ' : '') + (it === selected ? 'selected ' : '') + (it.bad ? 'bad' : ''),
        tabindex: 0, dataset: { seq: it.rec.seq, lane: it.lane } },
      h('td.mono.small', fmtTime(it.rec.at)),
      h('td', h('span.badge.lane-' + it.lane, it.lane === 'log' ? (it.level || 'log') : it.lane)),
      h('td.mono.tl-text', it.text || ''));
      const pick = () => { select(it); setCursor(it.t, false); };
      tr.addEventListener('click', pick);
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') pick(); });
      listBody.append(tr);
    }
    listBody.querySelector('tr.now')?.scrollIntoView({ block: 'nearest' });
  };
  const drawListSoon = debounce(drawList, 60);

  const setCursor = (t, follow) => {
    cursor = Math.min(end, Math.max(start, t));
    following = follow;
    followBtn.setAttribute('aria-pressed', String(following));
    followBtn.textContent = following ? 'Following' : 'Follow';
    scrub.value = String(Math.round(cursor - start));
    cursorLine.style.left = `calc(var(--tl-label) + (100% - var(--tl-label)) * ${pct(cursor) / 100})`;
    main.querySelector('#tl-at').textContent = cursor ? fmtTime(new Date(cursor).toISOString()) : '';
    showFrame();
    drawListSoon();
  };

  scrub.addEventListener('input', () => {
    const t = start + Number(scrub.value);
    setCursor(t, t >= end && live());
  });
  track.addEventListener('click', (e) => {
    const r = track.getBoundingClientRect();
    const labelW = track.querySelector('.tl-lane-track').getBoundingClientRect().left - r.left;
    const x = e.clientX - r.left - labelW;
    if (x < 0) return;
    setCursor(start + (x / (r.width - labelW)) * span(), false);
  });
  const stepFrame = (d) => {
    if (!frames.length) return;
    const i = Math.min(frames.length - 1, Math.max(0, frameAt(cursor) + d));
    setCursor(frames[i].t, false);
  };
  prevBtn.addEventListener('click', () => stepFrame(-1));
  nextBtn.addEventListener('click', () => stepFrame(1));
  followBtn.addEventListener('click', () => setCursor(end, !following));
  let mark = null; // ms, or null: from the recording's start
  markBtn.addEventListener('click', () => {
    mark = cursor;
    markBtn.textContent = 'Start ' + fmtTime(new Date(mark).toISOString());
  });
  saveFlowBtn.addEventListener('click', () => {
    if (!start) return;
    const from = Math.min(mark ?? start, cursor), to = Math.max(mark ?? start, cursor) + 1;
    const q = new URLSearchParams({ since: new Date(from).toISOString(), until: new Date(to).toISOString() });
    const a = h('a', { href: `/api/sessions/${enc(sid)}/flow?${q}`, download: '' });
    document.body.append(a);
    a.click();
    a.remove();
  });
  const onKey = (e) => {
    if (e.target instanceof HTMLElement && /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) && e.target !== scrub) return;
    if (e.key === ',') { e.preventDefault(); stepFrame(-1); }
    if (e.key === '.') { e.preventDefault(); stepFrame(1); }
  };
  document.addEventListener('keydown', onKey);

  // select shows an item's details: a call's request and response, a request's metadata,
  // a log line whole.
  const select = async (it) => {
    selected = it;
    drawListSoon();
    detailsBody.textContent = '';
    const d = it.rec.data || {};
    if (it.call) {
      const { req, res, denied } = it.call;
      const rd = res?.data || {};
      detailsBody.append(h('div.tl-call#tl-call',
        h('h3', it.text),
        h('table.props',
          h('tr', h('th', 'request'), h('td.mono', d.requestId || '—')),
          h('tr', h('th', 'sent'), h('td.mono', fmtTime(req.at) + ' · ' + fmtBytes(d.bytes))),
          res ? h('tr', h('th', 'answered'), h('td.mono', `${fmtTime(res.at)} · ${fmtBytes(rd.bytes)} · ${fmtMs(rd.durationMs)}` + (rd.compressed ? ' · gzip' : ''))) : null,
          h('tr', h('th', 'outcome'), h('td', denied ? h('span.badge.err', 'refused by the host: ' + (d.errorCode || '')) :
            res ? h('span.badge.' + (rd.outcome === 'ok' ? 'ok' : 'err'), rd.outcome + (rd.errorCode ? ' ' + rd.errorCode : '')) : h('span.muted', 'no answer recorded')))),
        h('h3', denied ? 'Refused request' : 'Request'), await body(req),
        denied ? null : h('h3', 'Response'), denied ? null : (res ? await body(res) : h('p.muted', 'No response in the recording.'))));
      return;
    }
    detailsBody.append(h('h3', it.text || it.rec.kind), h('div.muted.small', fmtTime(it.rec.at) + ' · ' + it.rec.kind), jsonTree(d, { openDepth: 2 }));
  };

  // body renders a traffic record's payload: inline, or its file when large.
  const body = async (rec) => {
    const d = rec.data || {};
    if (d.payload !== undefined) return h('div.tl-body', jsonTree(d.payload, { openDepth: 3 }));
    if (!rec.blob) return h('p.muted', 'No body recorded.');
    try {
      const res = await fetch(fileURL(rec), { credentials: 'same-origin' });
      const text = await res.text();
      try { return h('div.tl-body', jsonTree(JSON.parse(text), { openDepth: 2 })); } catch { return h('pre.code', text.slice(0, 1 << 20)); }
    } catch (e) {
      return h('div.error-card', e.message);
    }
  };

  const live = () => sessionById(sid)?.state === 'connected';

  // load fetches every record after the last one seen, page by page.
  const load = async () => {
    if (loading || closed || truncated) return;
    loading = true;
    let added = 0;
    try {
      for (;;) {
        const p = await api('GET', `/api/sessions/${enc(sid)}/recording?kind=${KINDS}&after=${lastSeq}&limit=${PAGE}`);
        for (const rec of p.records) { add(rec); lastSeq = Math.max(lastSeq, rec.seq); added++; }
        if (frames.length + items.length >= MAX_RECORDS) { truncated = true; break; }
        if (!p.next || closed) break;
      }
    } catch (e) {
      status.textContent = '';
      status.append(h('div.error-card', h('strong', e.code || 'error'), ' ', e.message));
    } finally {
      loading = false;
    }
    if (!added && start) return;
    frames.sort((a, b) => a.t - b.t);
    items.sort((a, b) => a.t - b.t);
    const all = [frames[0]?.t, frames.at(-1)?.t, items[0]?.t, items.at(-1)?.t].filter((x) => x !== undefined);
    if (all.length) {
      start = Math.min(...all);
      end = Math.max(...all);
    }
    drawAxis();
    drawLanes();
    saveFlowBtn.disabled = !start;
    if (!start) {
      status.textContent = '';
      status.append(h('div.notice', 'Nothing recorded for this session yet.'));
      return;
    }
    status.textContent = '';
    if (first) {
      // A live session opens at its newest frame, following; a recording at its start.
      first = false;
      following = live();
    }
    setCursor(following ? end : cursor || start, following);
  };

  const describe = async () => {
    let s = sessionById(sid);
    if (!s) {
      try { s = await api('GET', `/api/sessions/${enc(sid)}`); } catch { s = null; }
    }
    if (!s) return;
    title.textContent = 'Timeline · ' + (s.appName || s.appId);
    const st = sessionState(s);
    stateBadge.className = 'badge state-' + st;
    stateBadge.textContent = s.recording?.origin === 'import' ? 'imported' : st;
    stateBadge.title = st === 'unknown' && s.recording?.origin !== 'import' ? hostGoneTitle : '';
    followBtn.hidden = s.state !== 'connected';
  };

  describe();
  load();
  const refresh = debounce(() => { if (live()) load(); }, 300);
  const offFrame = on('frame', (f) => { if (f.sessionId === sid) refresh(); });
  const offTraffic = on('traffic', (e) => { if (e.sessionId === sid) refresh(); });
  const offSessions = on('sessions', () => { describe(); refresh(); });
  const offHost = on('host', describe);
  const timer = setInterval(refresh, 3000); // logs, network and touches raise no event
  const ro = new ResizeObserver(debounce(drawLanes, 100));
  ro.observe(track);
  return () => {
    closed = true;
    offFrame(); offTraffic(); offSessions(); offHost(); clearInterval(timer); ro.disconnect();
    document.removeEventListener('keydown', onKey);
  };
}

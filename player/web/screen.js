// The session view: the current screen (a screenshot on demand, or the live frames the
// app streams) beside its visual tree. Selecting a node highlights its bounds and shows
// its properties and a ready-made node reference.

import { h, put, api, enc, copyButton, policyBadge, fmtAgo, typing } from './util.js';
import { state, on, sessionById, sessionState, hostGoneTitle, callTool, uiOperation } from './state.js';
import { errorCard } from './result.js';
import { renderRecords } from './records.js';

export function renderScreen(main, sid) {
  const s = sessionById(sid);
  const badge = s ? h('span.badge') : null;
  const drawBadge = () => {
    if (!badge) return;
    const st = sessionState(s);
    badge.className = 'badge state-' + st;
    badge.textContent = st;
    badge.title = st === 'unknown' ? hostGoneTitle : '';
  };
  drawBadge();
  const offHost = on('host', drawBadge);
  const head = h('div.page-head',
    h('h1', s ? (s.appName || s.appId) : sid),
    h('span.muted.mono', sid),
    badge,
    s ? policyBadge(s.maxToolPolicy) : null,
    h('div.spacer'));
  const captureBtn = h('button.primary#capture', { type: 'button', title: 'Capture the screen and its tree (r)' }, 'Capture');
  const modeShot = h('button.seg.on#mode-shot', { type: 'button', 'aria-pressed': 'true' }, 'Screenshot');
  const modeLive = h('button.seg#mode-live', { type: 'button', 'aria-pressed': 'false', disabled: true, title: 'The app has streamed no live frame yet' }, 'Live');
  head.append(h('div.segmented', { role: 'group', 'aria-label': 'Image source' }, modeShot, modeLive), captureBtn);

  const img = h('img#screen-img', { alt: 'Screen of the app' });
  const hover = h('div.hl.hover');
  const sel = h('div.hl.sel#highlight');
  hover.hidden = sel.hidden = true;
  const stage = h('div.stage', img, hover, sel);
  const shotInfo = h('div.muted.small#shot-info');
  const screenBox = h('div.screen-box', h('div.placeholder#screen-empty', 'Press Capture (r) to take a screenshot.'), stage, shotInfo);
  stage.hidden = true;

  const treeBox = h('div.tree#tree', { role: 'tree', 'aria-label': 'Visual tree' });
  const treeInfo = h('div.muted.small');
  const details = h('div.node-details#node-details', h('p.muted', 'Select a node in the tree or on the screen.'));
  const status = h('div.status');
  const records = renderRecords(sid);
  main.append(h('section.page.screen-page', head, status,
    h('div.split',
      h('div.panel.screen-panel', screenBox),
      h('div.panel.tree-panel', h('div.panel-head', h('h2', 'Visual tree'), treeInfo), treeBox),
      h('div.panel.details-panel', h('div.panel-head', h('h2', 'Node')), details)),
    records.el));

  let tree = null;     // the snapshot's result: the host's projection of the app's tree
  let nodes = [];      // flattened, document order: { node, depth, row, parent }
  let selected = null; // entry of nodes
  let mode = 'shot';
  let shotUrl = null, liveUrl = null;
  let busy = false;

  const rootBounds = () => tree?.viewport || tree?.root?.bounds || (img.naturalWidth ? { x: 0, y: 0, width: img.naturalWidth, height: img.naturalHeight } : null);

  // place positions a highlight box over the image for bounds b (screen points).
  const place = (box, b) => {
    const rb = rootBounds();
    if (!b || !rb || !img.clientWidth || !rb.width) { box.hidden = true; return; }
    const k = img.clientWidth / rb.width;
    const ky = img.clientHeight / (rb.height || rb.width * img.clientHeight / img.clientWidth);
    box.hidden = false;
    box.style.left = (img.offsetLeft + (b.x - rb.x) * k) + 'px';
    box.style.top = (img.offsetTop + (b.y - rb.y) * ky) + 'px';
    box.style.width = Math.max(2, b.width * k) + 'px';
    box.style.height = Math.max(2, b.height * ky) + 'px';
  };

  const showImage = () => {
    const url = mode === 'live' ? liveUrl : shotUrl;
    stage.hidden = !url;
    main.querySelector('#screen-empty').hidden = !!url;
    if (url && img.getAttribute('src') !== url) img.src = url;
  };
  img.addEventListener('load', () => { place(sel, selected?.node.bounds); });
  const ro = new ResizeObserver(() => place(sel, selected?.node.bounds));
  ro.observe(stage);

  const setMode = (m) => {
    mode = m;
    modeShot.classList.toggle('on', m === 'shot');
    modeLive.classList.toggle('on', m === 'live');
    modeShot.setAttribute('aria-pressed', String(m === 'shot'));
    modeLive.setAttribute('aria-pressed', String(m === 'live'));
    showImage();
  };
  modeShot.addEventListener('click', () => setMode('shot'));
  modeLive.addEventListener('click', () => setMode('live'));

  // Live frames: the latest one may already be there; else the last one the host recorded
  // (a session that disconnected, a page opened after the last frame) stands in for it.
  const liveAvailable = (url, title = 'Live frames streamed by the app') => {
    liveUrl = url;
    modeLive.disabled = false;
    modeLive.title = title;
    if (mode === 'live') showImage();
  };
  if (state.frames.has(sid)) liveAvailable(state.frames.get(sid).url);
  else {
    api('GET', `/api/sessions/${enc(sid)}/recording?kind=frame&newest=true&limit=1`).then((p) => {
      const rec = p.records[0];
      if (!rec || !rec.blob || liveUrl) return;
      liveAvailable(`/api/sessions/${enc(sid)}/recording/${rec.seq}/file`, `The last frame the host recorded (${fmtAgo(rec.at)})`);
      if (!shotUrl) setMode('live');
    }, () => { /* a host that records nothing */ });
  }
  const offFrame = on('frame', (f) => {
    if (f.sessionId !== sid) return;
    const first = !liveUrl;
    liveAvailable(f.url);
    if (first) setMode('live');
  });

  const select = (entry, focus = false) => {
    if (selected) selected.row.classList.remove('selected');
    selected = entry;
    if (!entry) { sel.hidden = true; return; }
    entry.row.classList.add('selected');
    entry.row.setAttribute('aria-selected', 'true');
    for (const n of nodes) if (n !== entry) n.row.setAttribute('aria-selected', 'false');
    for (const n of nodes) n.row.tabIndex = n === entry ? 0 : -1;
    if (focus) entry.row.focus();
    entry.row.scrollIntoView({ block: 'nearest' });
    place(sel, entry.node.bounds);
    showDetails(entry.node);
  };

  const reference = (node) => ({ source: tree.source, snapshotId: tree.snapshotId, revision: tree.revision, nodeId: node.id });

  const showDetails = (node) => {
    details.textContent = '';
    const rows = [];
    for (const k of ['id', 'type', 'role', 'text', 'value', 'automationId', 'visible', 'enabled', 'checked', 'secure']) {
      if (node[k] !== undefined) rows.push(h('tr', h('th', k), h('td.mono', typeof node[k] === 'string' ? node[k] : JSON.stringify(node[k]))));
    }
    if (node.bounds) {
      const b = node.bounds;
      rows.push(h('tr', h('th', 'bounds'), h('td.mono', `x ${b.x}, y ${b.y}, ${b.width} × ${b.height}`)));
    }
    rows.push(h('tr', h('th', 'actions'), h('td', (node.actions || []).length ? node.actions.join(', ') : h('span.muted', 'none'))));
    const ref = reference(node);
    const refText = JSON.stringify(ref, null, 2);
    const actions = h('div.actions');
    for (const a of node.actions || []) {
      if (['tap', 'focus', 'toggle'].includes(a)) {
        actions.append(h('button.small', { type: 'button', title: `${a} this node through the host (ansight ui), then capture again`, onclick: () => act(node, a) }, a));
      }
    }
    // Highlight on device: an overlay drawn by the app over its own screen (ui.show_overlay),
    // in its screenshots and live frames, for whoever watches the device.
    const highlight = h('button.small#highlight-on-device', { type: 'button', title: 'Draw an overlay over this node on the device for 3 s (ui.show_overlay)',
      onclick: () => highlightOnDevice(node) }, 'Highlight on device');
    const open = h('a.button.small', { href: `#/s/${enc(sid)}/tools/ui.perform_action`, title: 'Open ui.perform_action with this reference' }, 'Use in ui.perform_action');
    open.addEventListener('click', () => { state.prefill = { toolId: 'ui.perform_action', arguments: { reference: ref, action: (node.actions || [])[0] || 'tap' } }; });
    put(details, h('table.props', rows),
      h('h3', 'Node reference'), h('pre.code#node-ref', refText),
      h('div.row-buttons', copyButton(() => refText, 'Copy reference'), open, highlight), actions.childNodes.length ? h('div', h('h3', 'Act'), actions) : null);
  };

  const highlightOnDevice = async (node) => {
    status.textContent = '';
    try {
      const res = await callTool(sid, { toolId: 'ui.show_overlay', arguments: { nodeId: node.id, label: node.text || node.automationId || node.id, durationMs: 3000 } });
      if (!res.call.success) { status.append(h('h3', 'ui.show_overlay'), errorCard(res.call.error)); return; }
      status.append(h('div.notice', 'Highlighted on the device for 3 s.'));
    } catch (e) {
      status.append(h('div.error-card', e.message));
    }
  };

  const act = async (node, action) => {
    status.textContent = '';
    try {
      // The node as this tree shows it: an id that names another element by now (tree-path
      // ids, a screen that changed) is refused rather than acted on.
      const selector = { nodeId: node.id, automationId: node.automationId || '', role: node.role || '', type: node.type || '' };
      const res = await uiOperation(sid, { operation: 'act', selector, action, timeoutMs: 0 });
      if (!res.succeeded) { status.append(h('div.error-card', h('strong', res.code || 'failed'), ' ', res.message)); return; }
      await capture();
    } catch (e) {
      status.append(h('div.error-card', e.message));
    }
  };

  const drawTree = () => {
    treeBox.textContent = '';
    nodes = [];
    const walk = (node, depth, parent) => {
      const label = node.text;
      const row = h('div.node', { role: 'treeitem', tabindex: -1, 'aria-level': depth + 1, dataset: { nodeId: node.id } },
        h('span.ntype', node.type || ''),
        label ? h('span.nlabel', JSON.stringify(label)) : null,
        node.automationId ? h('span.nauto', '#' + node.automationId) : null,
        h('span.nrole', node.role),
        node.visible === false ? h('span.badge.dim', 'hidden') : null,
        node.enabled === false ? h('span.badge.dim', 'disabled') : null);
      row.style.paddingLeft = (8 + depth * 14) + 'px';
      if (node.visible === false) row.classList.add('invisible');
      const entry = { node, depth, row, parent };
      nodes.push(entry);
      row.addEventListener('click', () => select(entry));
      row.addEventListener('mouseenter', () => place(hover, node.bounds));
      row.addEventListener('mouseleave', () => { hover.hidden = true; });
      treeBox.append(row);
      for (const c of node.children || []) walk(c, depth + 1, entry);
    };
    if (tree?.root) walk(tree.root, 0, null);
    if (nodes.length) nodes[0].row.tabIndex = 0;
    treeInfo.textContent = tree ? `${tree.nodeCount ?? nodes.length} nodes · ${tree.snapshotId}` : '';
  };

  treeBox.addEventListener('keydown', (e) => {
    const i = nodes.findIndex((n) => n.row === document.activeElement);
    if (i < 0) return;
    let j = i;
    if (e.key === 'ArrowDown') j = Math.min(nodes.length - 1, i + 1);
    else if (e.key === 'ArrowUp') j = Math.max(0, i - 1);
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = nodes.length - 1;
    else if (e.key === 'ArrowLeft' && nodes[i].parent) j = nodes.indexOf(nodes[i].parent);
    else return;
    e.preventDefault();
    select(nodes[j], true);
  });

  // A click on the screen selects the deepest visible node under it.
  stage.addEventListener('click', (e) => {
    const rb = rootBounds();
    if (!rb || !nodes.length) return;
    const r = img.getBoundingClientRect();
    const x = rb.x + (e.clientX - r.left) * rb.width / r.width;
    const y = rb.y + (e.clientY - r.top) * (rb.height || rb.width * r.height / r.width) / r.height;
    let best = null;
    for (const n of nodes) {
      const b = n.node.bounds;
      if (b && n.node.visible !== false && x >= b.x && y >= b.y && x < b.x + b.width && y < b.y + b.height) {
        if (!best || n.depth >= best.depth) best = n;
      }
    }
    if (best) select(best, true);
  });

  const capture = async () => {
    if (busy) return;
    busy = true;
    captureBtn.disabled = true;
    captureBtn.textContent = 'Capturing…';
    status.textContent = '';
    const keep = selected?.node.id;
    try {
      // The host reads the app's tree (compact v2 or the legacy form, from any SDK) and
      // answers one projection: types resolved, state with ancestors, the viewport.
      const t = await uiOperation(sid, { operation: 'snapshot', maxNodes: 2000, maxDepth: 64 });
      if (t.succeeded) {
        tree = t.result;
        drawTree();
        const again = nodes.find((n) => n.node.id === keep);
        if (again) select(again); else { selected = null; sel.hidden = true; details.textContent = ''; details.append(h('p.muted', 'Select a node in the tree or on the screen.')); }
      } else {
        status.append(h('h3', 'ui.get_visual_tree'), h('div.error-card', h('strong', t.code || 'failed'), ' ', t.message));
      }
      const shot = await callTool(sid, { toolId: 'ui.get_screenshot', arguments: { format: 'png' } });
      if (shot.call.success) {
        const r = shot.call.result.result || {};
        shotUrl = shot.artifactUrls[r.transferId] || null;
        shotInfo.textContent = `${r.width ?? '?'} × ${r.height ?? '?'} ${r.format || ''} · captured ${fmtAgo(r.capturedAtUtc)} · ${shot.call.durationMs} ms`;
        setMode('shot');
      } else {
        status.append(h('h3', 'ui.get_screenshot'), errorCard(shot.call.error));
      }
    } catch (e) {
      status.append(h('div.error-card', h('strong', e.code || 'error'), ' ', e.message));
    } finally {
      busy = false;
      captureBtn.disabled = false;
      captureBtn.textContent = 'Capture';
    }
  };
  captureBtn.addEventListener('click', capture);
  const onKey = (e) => {
    if (!typing(e) && !e.ctrlKey && !e.metaKey && !e.altKey && e.key === 'r') { e.preventDefault(); capture(); }
  };
  document.addEventListener('keydown', onKey);
  if (s && s.state === 'connected') capture();
  else status.append(h('div.notice', 'This session is disconnected: nothing to capture.'));

  return () => { offFrame(); offHost(); records.close(); ro.disconnect(); document.removeEventListener('keydown', onKey); };
}

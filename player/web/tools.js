// The tools page: the session's catalog as a searchable list (the compact index), and
// for the selected tool its definition (fetched on demand), a form generated from its
// argumentsSchema, evidence options, Run, and the outcome.

import { h, put, api, enc, policyBadge, debounce, typing } from './util.js';
import { state, on, sessionById, toolIndex, callTool } from './state.js';
import { buildForm } from './form.js';
import { outcome, errorCard } from './result.js';

function terms(s) {
  return s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

// status says whether the host would call the tool, and why not.
export function toolStatus(t) {
  if (t.denial) {
    const policy = t.denial.code === 'tool_policy_not_granted';
    return { cls: policy ? 'denied' : 'unavailable', text: policy ? 'denied' : 'unavailable', title: t.denial.reason };
  }
  if (t.runtime && !t.runtime.available) return { cls: 'unavailable', text: 'unavailable', title: t.runtime.reason || '' };
  if (t.executable === false) return { cls: 'unavailable', text: 'not executable', title: '' };
  return null;
}

export function renderTools(main, sid, toolId) {
  const search = h('input#tool-search', { type: 'search', placeholder: 'Search tools  (/)', 'aria-label': 'Search tools', autocomplete: 'off' });
  const policyFilter = h('select#policy-filter', { 'aria-label': 'Policy' },
    h('option', { value: '' }, 'any policy'), ['read', 'write', 'critical'].map((p) => h('option', { value: p }, p)));
  const runnable = h('input#runnable-only', { type: 'checkbox' });
  const list = h('div.tool-list#tool-list', { role: 'listbox', 'aria-label': 'Tools' });
  const count = h('div.muted.small');
  const detail = h('div.tool-detail#tool-detail');
  main.append(h('section.page.tools-page',
    h('div.split.two',
      h('div.panel.list-panel',
        h('div.filters', search, h('div.filter-row', policyFilter, h('label.check', runnable, ' callable now'))),
        count, list),
      h('div.panel.detail-panel', detail))));

  let index = null;
  let current = null; // the open tool's cleanup

  const drawList = () => {
    list.textContent = '';
    if (!index) return;
    const ts = terms(search.value);
    const pol = policyFilter.value;
    const shown = index.tools.filter((t) => {
      if (pol && t.policy !== pol) return false;
      if (runnable.checked && toolStatus(t)) return false;
      const text = terms([t.id, t.name, t.description, t.category, t.keywords, ...(t.prerequisiteToolIds || [])].join(' ')).join(' ');
      return ts.every((x) => text.includes(x));
    });
    count.textContent = `${shown.length} of ${index.totalCount} tools`;
    let cat = null;
    for (const t of shown) {
      if (t.category !== cat) {
        cat = t.category;
        list.append(h('div.cat', cat || 'other'));
      }
      const st = toolStatus(t);
      list.append(h('a.tool-item', {
        href: `#/s/${enc(sid)}/tools/${enc(t.id)}`, role: 'option', 'aria-selected': String(t.id === toolId),
        class: [t.id === toolId ? 'selected' : '', st ? 'blocked' : ''].join(' '), dataset: { toolId: t.id },
      },
      h('div.tool-line', h('span.mono.tool-id', t.id), policyBadge(t.policy),
        st ? h('span.badge.' + st.cls, { title: st.title }, st.text) : null),
      h('div.tool-name', t.name)));
    }
    if (!shown.length) list.append(h('p.muted', 'No tool matches.'));
  };

  const load = async (force) => {
    try {
      index = await toolIndex(sid, force);
      drawList();
    } catch (e) {
      list.textContent = '';
      list.append(h('div.error-card', h('strong', e.code), ' ', e.message));
    }
  };
  search.addEventListener('input', drawList);
  policyFilter.addEventListener('change', drawList);
  runnable.addEventListener('change', drawList);
  // Arrow keys move through the list from the search box.
  const move = (e) => {
    const items = [...list.querySelectorAll('.tool-item')];
    if (!items.length || !['ArrowDown', 'ArrowUp'].includes(e.key)) return;
    e.preventDefault();
    const i = items.indexOf(document.activeElement);
    const j = e.key === 'ArrowDown' ? Math.min(items.length - 1, i + 1) : Math.max(0, i - 1);
    items[i < 0 ? 0 : j].focus();
  };
  search.addEventListener('keydown', move);
  list.addEventListener('keydown', move);

  let lastKey = '';
  const offSessions = on('sessions', () => {
    const s = sessionById(sid);
    const key = s ? `${s.revision}|${s.availabilityRevision}|${s.state}` : '';
    if (key !== lastKey) { lastKey = key; load(false); }
  });
  const onKey = (e) => {
    if (e.key === '/' && !typing(e)) { e.preventDefault(); search.focus(); search.select(); }
  };
  document.addEventListener('keydown', onKey);

  const s = sessionById(sid);
  lastKey = s ? `${s.revision}|${s.availabilityRevision}|${s.state}` : '';
  load(false);

  // show opens a tool in the detail pane; the list (search, scroll) stays as it is.
  const show = (id) => {
    current?.();
    current = null;
    toolId = id;
    detail.textContent = '';
    for (const el of list.querySelectorAll('.tool-item')) {
      const on = el.dataset.toolId === id;
      el.classList.toggle('selected', on);
      el.setAttribute('aria-selected', String(on));
    }
    if (id) current = openTool(detail, sid, id);
    else detail.append(h('div.empty', h('h2', 'Pick a tool'), h('p.muted', 'Search with /, move with the arrow keys, open with Enter.')));
  };
  show(toolId);
  if (!toolId) setTimeout(() => search.focus(), 0);

  const cleanup = () => { offSessions(); document.removeEventListener('keydown', onKey); current?.(); };
  cleanup.retarget = show; // the router calls it when only the tool changes
  return cleanup;
}

// openTool shows one tool: definition, denial, form, evidence, run, outcome.
function openTool(box, sid, toolId) {
  box.append(h('p.muted', 'Loading ' + toolId + '…'));
  let cleanup = () => {};
  let gone = false;
  api('GET', `/api/sessions/${enc(sid)}/tools/${enc(toolId)}`).then((tf) => {
    if (gone) return;
    box.textContent = '';
    cleanup = drawTool(box, sid, tf);
  }, (e) => {
    box.textContent = '';
    box.append(h('div.error-card', h('strong', e.code), ' ', e.message));
  });
  return () => { gone = true; cleanup(); };
}

function drawTool(box, sid, tf) {
  const t = tf.tool;
  const s = sessionById(sid);
  const st = toolStatus(t);
  put(box, h('div.tool-head',
    h('h1', t.name || t.id),
    h('div.tool-meta', h('span.mono', t.id), policyBadge(t.policy), t.category ? h('span.badge.dim', t.category) : null,
      st ? h('span.badge.' + st.cls, st.text) : h('span.badge.ok', 'callable'))),
  t.description ? h('p.tool-desc', t.description) : null,
  t.prerequisiteToolIds?.length ? h('p.muted', 'Call first: ', t.prerequisiteToolIds.map((p) => h('a.mono', { href: `#/s/${enc(sid)}/tools/${enc(p)}` }, p + ' '))) : null);

  if (t.denial || (t.runtime && !t.runtime.available)) {
    const rt = t.runtime || {};
    let remedy = rt.remediation;
    if (t.denial?.code === 'tool_policy_not_granted') {
      remedy = `This session's grant is '${s?.maxToolPolicy || '?'}' and this tool needs '${t.policy}'. ` +
        `An app paired with a higher grant can call it: ansight pairing issue --max-tool-policy ${t.policy}.`;
    }
    box.append(h('div.denial#denial', { role: 'note' },
      h('div.denial-head', h('strong', t.denial?.code === 'tool_policy_not_granted' ? 'Denied: the host will not call this tool' : 'Unavailable right now'),
        h('code.code-badge', t.denial?.code || rt.code || 'unavailable')),
      h('p', t.denial?.reason || rt.reason || ''),
      rt.requiredState ? h('p', h('span.muted', 'Needs state: '), h('code', rt.requiredState)) : null,
      remedy ? h('p.remedy', h('span.muted', 'Remediation: '), remedy) : null,
      h('p.muted.small', 'You can still run it to see how the host or the app refuses.')));
  }

  // Arguments: the generated form, or raw JSON.
  const tabForm = h('button.tab.on', { type: 'button', role: 'tab', 'aria-selected': 'true', id: 'tab-form' }, 'Form');
  const tabJSON = h('button.tab', { type: 'button', role: 'tab', 'aria-selected': 'false', id: 'tab-json' }, 'JSON');
  const raw = h('textarea.code#raw-args', { rows: 10, spellcheck: 'false', 'aria-label': 'Arguments as JSON' });
  raw.hidden = true;
  const summary = h('div.violations#violations', { role: 'alert' });
  let form = null;
  const formBox = h('div.form-box');
  if (tf.form) {
    form = buildForm(tf.form, { onChange: () => { dirty = true; liveValidate(); } });
    formBox.append(form.el);
  } else {
    formBox.append(h('p.muted', tf.formError || 'No form for this tool.'));
  }
  let mode = form ? 'form' : 'json';
  let dirty = false;
  const setMode = (m) => {
    if (m === mode) return;
    if (m === 'json') {
      raw.value = JSON.stringify(form ? form.collect().value : {}, null, 2);
    } else {
      let v;
      try { v = JSON.parse(raw.value || '{}'); } catch (e) {
        showLocal([{ path: '$', message: 'The JSON does not parse, so the form cannot show it: ' + e.message }]);
        return;
      }
      const dropped = form.set(v);
      if (dropped.length) showLocal([{ path: '$', message: 'Only the JSON editor can show: ' + dropped.join(', ') }]);
    }
    mode = m;
    tabForm.classList.toggle('on', m === 'form');
    tabJSON.classList.toggle('on', m === 'json');
    tabForm.setAttribute('aria-selected', String(m === 'form'));
    tabJSON.setAttribute('aria-selected', String(m === 'json'));
    formBox.hidden = m !== 'form';
    raw.hidden = m !== 'json';
  };
  tabForm.addEventListener('click', () => form && setMode('form'));
  tabJSON.addEventListener('click', () => setMode('json'));
  if (!form) { formBox.hidden = true; raw.hidden = false; raw.value = '{}'; tabForm.disabled = true; tabForm.classList.remove('on'); tabJSON.classList.add('on'); }
  raw.addEventListener('input', () => { dirty = true; liveValidate(); });

  const evTree = h('input#ev-tree', { type: 'checkbox' });
  const evShot = h('input#ev-shot', { type: 'checkbox' });
  const evDelay = h('input#ev-delay', { type: 'number', min: 0, max: 10000, step: 50, placeholder: '0', 'aria-label': 'Delay before evidence in milliseconds' });
  const run = h('button.primary#run', { type: 'button', title: 'Run (Ctrl+Enter)' }, 'Run');
  const runAnyway = h('button.warn#run-anyway', { type: 'button', title: 'Send the arguments as they are: the app validates them too' }, 'Run anyway');
  runAnyway.hidden = true;
  const addBatch = h('button#add-batch', { type: 'button', title: 'Add this call to the batch page' }, 'Add to batch');
  const result = h('div.result#result', { 'aria-live': 'polite' });

  box.append(h('section.args',
    h('div.args-head', h('h2', 'Arguments'), h('div.tabs', { role: 'tablist' }, tabForm, tabJSON)),
    summary, formBox, raw),
  h('section.evidence',
    h('h2', 'After the call'),
    h('div.evidence-row',
      h('label.check', evTree, ' visual tree'), h('label.check', evShot, ' screenshot'),
      h('label.delay', 'delay ', evDelay, ' ms'))),
  h('div.run-row', run, runAnyway, addBatch, h('span.muted.small', 'Ctrl+Enter runs')),
  result);

  const args = () => {
    if (mode === 'form') return form.collect();
    try {
      return { value: JSON.parse(raw.value.trim() || '{}'), problems: [] };
    } catch (e) {
      return { value: undefined, problems: [{ path: '$', code: 'invalid_json', message: 'not valid JSON: ' + e.message }] };
    }
  };

  function showLocal(list) {
    summary.textContent = '';
    if (!list.length) return;
    summary.append(h('strong', list.length === 1 ? '1 problem' : `${list.length} problems`),
      h('ul', list.map((v) => h('li', h('code', v.path), ' ', v.message))));
  }
  const showViolations = (list) => {
    showLocal(list);
    if (form && mode === 'form') form.showViolations(list);
  };

  // validate asks the host (the app's validator) and shows the violations.
  let vseq = 0;
  const validate = async () => {
    const { value, problems } = args();
    if (problems.length) { showViolations(problems); return false; }
    const my = ++vseq;
    try {
      const v = await api('POST', `/api/sessions/${enc(sid)}/tools/${enc(t.id)}/validate`, value);
      if (my !== vseq) return v.valid;
      showViolations(v.violations || []);
      return v.valid;
    } catch (e) {
      showLocal([{ path: '$', message: 'could not validate: ' + e.message }]);
      return false;
    }
  };
  const liveValidate = debounce(() => { if (dirty) validate(); }, 350);

  const send = async (force) => {
    runAnyway.hidden = true;
    const { value, problems } = args();
    if (problems.length) { showViolations(problems); return; }
    if (!force && !(await validate())) { runAnyway.hidden = false; return; }
    const req = { toolId: t.id, arguments: value };
    const include = [];
    if (evTree.checked) include.push('visualTree');
    if (evShot.checked) include.push('screenshot');
    if (include.length) {
      req.after = { include };
      const d = Number(evDelay.value);
      if (d > 0) req.after.delayMilliseconds = d;
    }
    run.disabled = true;
    run.textContent = 'Running…';
    result.textContent = '';
    try {
      const ans = await callTool(sid, req);
      result.append(outcome(ans));
    } catch (e) {
      result.append(errorCard({ code: e.code, message: e.message, kind: e.status === 409 ? 'unavailable' : '' }));
    } finally {
      run.disabled = false;
      run.textContent = 'Run';
    }
  };
  run.addEventListener('click', () => send(false));
  runAnyway.addEventListener('click', () => send(true));
  addBatch.addEventListener('click', () => {
    const { value, problems } = args();
    if (problems.length) { showViolations(problems); return; }
    if (state.batch.length >= 32) { showLocal([{ path: '$', message: 'A batch holds at most 32 calls.' }]); return; }
    state.batch.push({ toolId: t.id, arguments: value, callId: '' });
    addBatch.textContent = `Added (${state.batch.length} in batch)`;
    setTimeout(() => { addBatch.textContent = 'Add to batch'; }, 1500);
  });
  const onKey = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(false); }
  };
  box.addEventListener('keydown', onKey);

  // A page may hand over arguments (the session view's node reference).
  if (state.prefill && state.prefill.toolId === t.id) {
    const v = state.prefill.arguments;
    state.prefill = null;
    if (form) form.set(v); else raw.value = JSON.stringify(v, null, 2);
    dirty = true;
    validate();
  }
  return () => { box.removeEventListener('keydown', onKey); };
}

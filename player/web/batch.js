// The batch page: compose up to 32 calls, run them as one tool.batch, see each outcome.

import { h, api, enc, fmtMs, policyBadge } from './util.js';
import { state, toolIndex } from './state.js';
import { errorCard } from './result.js';
import { jsonTree } from './jsontree.js';
import { toolStatus } from './tools.js';

const MAX = 32;

export function renderBatch(main, sid) {
  const list = h('div.batch-list#batch-list');
  const toolPick = h('input#batch-tool', { list: 'batch-tools', placeholder: 'tool id', 'aria-label': 'Tool id', autocomplete: 'off', spellcheck: 'false' });
  const datalist = h('datalist#batch-tools');
  const addBtn = h('button#batch-add', { type: 'button' }, '+ Add call');
  const cont = h('input#continue-on-error', { type: 'checkbox' });
  const run = h('button.primary#batch-run', { type: 'button' }, 'Run batch');
  const clear = h('button.ghost', { type: 'button' }, 'Clear');
  const count = h('span.muted');
  const result = h('div.result#batch-result', { 'aria-live': 'polite' });
  main.append(h('section.page.batch-page',
    h('div.page-head', h('h1', 'Batch'), count, h('div.spacer')),
    h('p.muted', 'The app runs the calls in order, in one request. Without continue-on-error it stops at the first failure. Tools pages add calls here with “Add to batch”.'),
    h('div.batch-add', toolPick, datalist, addBtn),
    list,
    h('div.run-row', run, h('label.check', cont, ' continue on error'), clear),
    result));

  let tools = [];
  toolIndex(sid).then((ix) => {
    tools = ix.tools;
    for (const t of tools) datalist.append(h('option', { value: t.id }, t.name));
    draw();
  }, () => {});

  const draw = () => {
    list.textContent = '';
    count.textContent = `${state.batch.length} of ${MAX} calls`;
    addBtn.disabled = state.batch.length >= MAX;
    run.disabled = state.batch.length === 0;
    if (!state.batch.length) list.append(h('p.muted.empty-line', 'No call yet.'));
    state.batch.forEach((c, i) => {
      const t = tools.find((x) => x.id === c.toolId);
      const st = t && toolStatus(t);
      const args = h('textarea.code', { rows: 2, spellcheck: 'false', 'aria-label': `Arguments of call ${i}` });
      args.value = JSON.stringify(c.arguments ?? {});
      args.addEventListener('input', () => {
        try { c.arguments = JSON.parse(args.value || '{}'); args.classList.remove('bad'); } catch { args.classList.add('bad'); }
      });
      const callId = h('input', { value: c.callId || '', placeholder: 'callId', 'aria-label': `callId of call ${i}`, spellcheck: 'false' });
      callId.addEventListener('input', () => { c.callId = callId.value; });
      const btn = (label, title, fn, disabled) => h('button.small.ghost', { type: 'button', title, 'aria-label': title, disabled, onclick: () => { fn(); draw(); } }, label);
      list.append(h('div.batch-item', { dataset: { index: i } },
        h('span.idx', String(i)),
        h('div.batch-main',
          h('div.tool-line', h('span.mono', c.toolId), t ? policyBadge(t.policy) : h('span.badge.unavailable', 'not in catalog'),
            st ? h('span.badge.' + st.cls, { title: st.title }, st.text) : null, callId),
          args),
        h('div.batch-btns',
          btn('↑', 'Move up', () => state.batch.splice(i - 1, 0, ...state.batch.splice(i, 1)), i === 0),
          btn('↓', 'Move down', () => state.batch.splice(i + 1, 0, ...state.batch.splice(i, 1)), i === state.batch.length - 1),
          btn('✕', 'Remove', () => state.batch.splice(i, 1)))));
    });
  };

  const add = () => {
    const id = toolPick.value.trim();
    if (!id || state.batch.length >= MAX) return;
    state.batch.push({ toolId: id, arguments: {}, callId: '' });
    toolPick.value = '';
    draw();
    list.querySelector('.batch-item:last-child textarea')?.focus();
  };
  addBtn.addEventListener('click', add);
  toolPick.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); add(); } });
  clear.addEventListener('click', () => { state.batch = []; result.textContent = ''; draw(); });

  run.addEventListener('click', async () => {
    if (list.querySelector('textarea.bad')) {
      result.textContent = '';
      result.append(h('div.error-card', 'Some arguments are not valid JSON.'));
      return;
    }
    const calls = state.batch.map((c) => {
      const x = { toolId: c.toolId, arguments: c.arguments ?? {} };
      if (c.callId) x.callId = c.callId;
      return x;
    });
    run.disabled = true;
    run.textContent = 'Running…';
    result.textContent = '';
    try {
      const ans = await api('POST', `/api/sessions/${enc(sid)}/batch`, { continueOnError: cont.checked, calls });
      result.append(batchOutcome(ans));
    } catch (e) {
      result.append(h('div.error-card', h('strong', e.code), ' ', e.message));
    } finally {
      run.disabled = false;
      run.textContent = 'Run batch';
    }
  });
  draw();
  return () => {};
}

function batchOutcome(ans) {
  const b = ans.batch;
  const urls = ans.artifactUrls || {};
  const box = h('div.outcome', { dataset: { success: String(b.success) } });
  if (!b.result) {
    box.append(h('div.outcome-head', h('span.badge.err', 'refused'), h('span.muted', fmtMs(b.durationMs))), errorCard(b.error));
    return box;
  }
  const r = b.result;
  box.append(h('div.outcome-head',
    b.success ? h('span.badge.ok', 'success') : h('span.badge.err', 'failed'),
    h('span', `${r.completed} of ${r.requested} completed`), r.stoppedEarly ? h('span.badge.dim', 'stopped early') : null,
    h('span.muted', fmtMs(b.durationMs))));
  const rows = h('tbody');
  for (const it of r.results || []) {
    const detail = h('tr.item-detail', h('td', { colspan: 5 },
      it.success ? jsonTree(it.result, { artifactUrls: urls, openDepth: 1 }) : errorCard(it.error)));
    detail.hidden = !!it.success;
    const toggle = h('button.small.ghost', { type: 'button', 'aria-expanded': String(!detail.hidden), onclick: () => {
      detail.hidden = !detail.hidden;
      toggle.setAttribute('aria-expanded', String(!detail.hidden));
    } }, 'details');
    rows.append(h('tr', { dataset: { index: it.index } },
      h('td.mono', String(it.index)), h('td.mono', it.callId || ''), h('td.mono', it.toolId || ''),
      h('td', it.success ? h('span.badge.ok', 'ok') : h('span.badge.err', it.error?.code || 'error')),
      h('td', toggle)), detail);
  }
  box.append(h('table.grid.batch-results', h('thead', h('tr', ['#', 'callId', 'tool', 'outcome', ''].map((x) => h('th', x)))), rows));
  return box;
}

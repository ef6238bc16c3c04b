// The Data page: an app's databases through the official SDKs' data tools, whatever its
// SDK — the databases (data.list_databases), their tables, columns and indexes
// (data.describe_schema), and a query box (data.query) whose results come in pages of at
// most 1000 rows, the next page asked with the result's nextRequest when the app gives one.

import { h, typing } from './util.js';
import { sessionById } from './state.js';
import { usableTools, run, failure } from './files.js';

const maxRows = 1000; // the tools' bound

export function renderData(main, sid) {
  const s = sessionById(sid);
  const dbPick = h('select#data-db', { 'aria-label': 'Database' });
  const status = h('div.status');
  const tables = h('div#data-tables');
  const columns = h('div#data-columns');
  const sql = h('textarea.code#data-sql', { rows: 4, spellcheck: 'false', 'aria-label': 'SQL' });
  const rowsIn = h('input#data-max-rows', { type: 'number', min: 1, max: maxRows, value: 100, 'aria-label': 'Rows per page' });
  const runBtn = h('button.primary#data-run', { type: 'button', title: 'Run the statement (Ctrl+Enter)' }, 'Run');
  const result = h('div#data-result');
  main.append(h('section.page.data-page',
    h('div.page-head', h('h1', 'Data'), h('span.muted.mono', s ? (s.appName || s.appId) : sid), h('div.spacer'),
      h('label', 'Database ', dbPick)),
    status,
    h('div.split.two',
      h('div.panel', h('div.panel-head', h('h2', 'Tables')), tables, columns),
      h('div.panel', h('div.panel-head', h('h2', 'Query')),
        h('p.muted.small', 'One read-only statement (SELECT, WITH…); the app refuses writes. At most ', String(maxRows), ' rows a page.'),
        sql, h('div.run-row', h('label', 'Rows per page ', rowsIn), runBtn), result))));

  let tools = new Map();
  let db = null;
  let gone = false;
  const show = (el, ...children) => { el.textContent = ''; el.append(...children); };

  const loadDatabases = async () => {
    const { result: r } = await run(sid, 'data.list_databases', {});
    dbPick.textContent = '';
    for (const d of r.databases || []) dbPick.append(h('option', { value: d.path, title: d.path }, d.name));
    if (!(r.databases || []).length) {
      show(tables, h('p.muted', 'The app lists no database.'));
      return;
    }
    db = r.databases[0].path;
    dbPick.value = db;
    await describe();
  };

  const describe = async () => {
    columns.textContent = '';
    if (!tools.get('data.describe_schema')?.ok) { show(tables, h('p.muted', 'The app offers no data.describe_schema.')); return; }
    try {
      const { result: r } = await run(sid, 'data.describe_schema', { path: db });
      const body = h('tbody');
      for (const t of r.tables || []) {
        const pick = () => showTable(t);
        body.append(h('tr', { tabindex: 0, dataset: { table: t.name }, onclick: pick, onkeydown: (e) => { if (e.key === 'Enter') pick(); } },
          h('td.strong', t.name), h('td.muted', t.type || ''), h('td.num', String((t.columns || []).length))));
      }
      show(tables, h('table.grid#data-table-list', h('thead', h('tr', ['Name', 'Type', 'Columns'].map((x) => h('th', { scope: 'col' }, x)))), body));
      const first = (r.tables || []).find((t) => t.type === 'table') || (r.tables || [])[0];
      if (first && !sql.value) sql.value = `SELECT * FROM ${quote(first.name)}`;
    } catch (e) {
      show(tables, failure(e));
    }
  };

  const quote = (name) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : '"' + name.replaceAll('"', '""') + '"');

  const showTable = (t) => {
    const body = h('tbody');
    for (const c of t.columns || []) {
      body.append(h('tr', h('td.mono', String(c.name ?? '')), h('td.muted', String(c.type ?? '')),
        h('td', c.pk ? 'primary key' : '', c.notnull ? ' not null' : '')));
    }
    show(columns, h('h3', t.name),
      h('table.grid#data-column-list', h('thead', h('tr', ['Column', 'Type', ''].map((x) => h('th', { scope: 'col' }, x)))), body),
      (t.indexes || []).length ? h('p.muted.small', 'Indexes: ', (t.indexes || []).map((i) => i.name).join(', ')) : null,
      t.sql ? h('pre.code.small', t.sql) : null,
      h('div.row-buttons', h('button.small', { type: 'button', onclick: () => { sql.value = `SELECT * FROM ${quote(t.name)}`; query(); } }, 'Query this table')));
  };

  // cell shows one value: null dimmed, a blob by its size, anything else as text.
  const cell = (v) => {
    if (v === null || v === undefined) return h('td.muted', 'NULL');
    if (typeof v === 'object' && v.type === 'blob') return h('td.muted', `blob, ${v.byteLength} bytes`);
    if (typeof v === 'object') return h('td.mono', JSON.stringify(v));
    return h('td', { class: typeof v === 'number' ? 'num' : '' }, String(v));
  };

  const query = async (args) => {
    if (!db) return;
    const n = Math.max(1, Math.min(maxRows, Number(rowsIn.value) || 100));
    args = args || { path: db, sql: sql.value, maxRows: n };
    runBtn.disabled = true;
    show(result, h('p.muted', 'Running…'));
    try {
      const { result: r } = await run(sid, 'data.query', args);
      const meta = r.columnMetadata || (r.columns || []).map((name) => ({ name, key: name }));
      const body = h('tbody');
      for (const row of r.rows || []) body.append(h('tr', meta.map((m) => cell(row[m.key]))));
      const first = r.offsetRows || 0;
      const count = (r.rows || []).length;
      const next = r.nextRequest ? h('button.small#data-next', { type: 'button', onclick: () => query(r.nextRequest.arguments) }, 'Next page') : null;
      show(result,
        h('div.muted.small#data-summary', count ? `rows ${first + 1}–${first + count}` : 'no rows', r.truncated ? ' · more follow' : '', ` · ${r.databasePath}`),
        h('div.table-scroll', h('table.grid#data-rows', h('thead', h('tr', meta.map((m) => h('th', { scope: 'col', title: m.declaredType || '' }, m.name)))), body)),
        next ? h('div.row-buttons', next) : null);
    } catch (e) {
      show(result, failure(e));
    } finally {
      runBtn.disabled = false;
    }
  };

  runBtn.addEventListener('click', () => query());
  sql.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); query(); } });
  dbPick.addEventListener('change', () => { db = dbPick.value; sql.value = ''; describe(); });
  const onKey = (e) => { if (!typing(e) && e.key === '/' ) { e.preventDefault(); sql.focus(); } };
  document.addEventListener('keydown', onKey);

  (async () => {
    try {
      tools = await usableTools(sid);
      if (gone) return;
      if (!tools.has('data.list_databases')) {
        main.querySelector('.data-page .split').replaceWith(h('div.empty#data-none', h('h2', 'No data tools'),
          h('p.muted', 'This app offers no data.list_databases: its SDK has no data tools, or the app did not register them.')));
        return;
      }
      if (!tools.get('data.query')?.ok) { sql.disabled = true; runBtn.disabled = true; }
      await loadDatabases();
    } catch (e) {
      show(status, failure(e));
    }
  })();

  return () => { gone = true; document.removeEventListener('keydown', onKey); };
}

// The Files page: an app's files through the official SDKs' file tools, whatever its SDK —
// browse its roots (files.list_directory), preview text and images (files.read_file,
// files.begin_binary_download), download (files.begin_binary_download, else
// files.download_file chunk by chunk, following each nextRequest) and upload into the
// folder shown (files.push_file) when the session's grant allows it.

import { h, fmtBytes, fmtAgo } from './util.js';
import { sessionById, toolIndex, callTool } from './state.js';
import { errorCard } from './result.js';

// usable is the tools the host would call for this session: offered, executable, not
// denied (by the grant) and available.
export async function usableTools(sid) {
  const idx = await toolIndex(sid);
  const out = new Map();
  for (const t of idx.tools || []) {
    out.set(t.id, { tool: t, ok: !t.denial && t.executable !== false && (!t.runtime || t.runtime.available !== false) });
  }
  return out;
}

// call runs a tool and returns its result, or throws the tool's error (as an Error with
// the error payload in .toolError).
export async function run(sid, toolId, args) {
  const ans = await callTool(sid, { toolId, arguments: args });
  if (!ans.call.success) {
    const e = new Error(ans.call.error?.message || 'the call failed');
    e.toolError = ans.call.error;
    throw e;
  }
  return { result: ans.call.result.result, urls: ans.artifactUrls || {} };
}

// failure renders what run threw.
export function failure(e) {
  return e.toolError ? errorCard(e.toolError) : h('div.error-card', { role: 'alert' }, h('strong', e.code || 'error'), ' ', e.message);
}

const maxUpload = 12 << 20;   // files.push_file carries base64 inside one call (the player takes 16 MiB)
const maxChunked = 64 << 20;  // what a download through files.download_file assembles in the page

export function renderFiles(main, sid) {
  const s = sessionById(sid);
  const rootPick = h('select#files-root', { 'aria-label': 'Root' });
  const crumbs = h('div.crumbs#files-path');
  const refresh = h('button.small', { type: 'button', title: 'List the folder again' }, 'Refresh');
  const status = h('div.status');
  const list = h('tbody');
  const listPanel = h('div.panel', h('div.panel-head', h('h2', 'Folder'), crumbs),
    h('table.grid.files#files-list', h('thead', h('tr', ['Name', 'Size', 'Modified'].map((t) => h('th', { scope: 'col' }, t)))), list));
  const preview = h('div#files-preview', h('p.muted', 'Select a file to preview it.'));
  const upload = h('div#files-upload');
  const pushed = h('div#files-push-status'); // kept across listings: an upload lists the folder again
  main.append(h('section.page.files-page',
    h('div.page-head', h('h1', 'Files'), h('span.muted.mono', s ? (s.appName || s.appId) : sid), h('div.spacer'),
      h('label', 'Root ', rootPick), refresh),
    status,
    h('div.split.two', h('div', listPanel, upload), h('div.panel', h('div.panel-head', h('h2', 'Preview')), preview))));

  let tools = new Map();
  let root = null, dir = '.', roots = [];
  let gone = false;
  const can = (id) => tools.get(id)?.ok;

  const show = (el, ...children) => { el.textContent = ''; el.append(...children); };

  const list_ = async () => {
    status.textContent = '';
    try {
      const args = { path: dir === '.' ? null : dir };
      if (root) args.root = root;
      const { result } = await run(sid, 'files.list_directory', args);
      if (gone) return;
      root = result.rootAlias;
      dir = result.relativePath || '.';
      if (!roots.length) {
        roots = result.availableRoots || [];
        rootPick.textContent = '';
        for (const r of roots) rootPick.append(h('option', { value: r.alias, title: r.path }, r.alias));
      }
      rootPick.value = root;
      drawCrumbs();
      list.textContent = '';
      if (dir !== '.') {
        list.append(h('tr', { tabindex: 0, dataset: { entry: '..' }, onclick: () => go(parent(dir)), onkeydown: enter(() => go(parent(dir))) },
          h('td', h('span.strong', '..')), h('td'), h('td')));
      }
      for (const e of result.entries || []) {
        const open = e.kind === 'directory' ? () => go(e.relativePath) : () => open_(e);
        list.append(h('tr', { tabindex: 0, dataset: { entry: e.name, kind: e.kind }, onclick: open, onkeydown: enter(open) },
          h('td', e.kind === 'directory' ? h('span.strong', e.name + '/') : e.name),
          h('td.num', e.kind === 'file' ? fmtBytes(e.sizeBytes) : ''),
          h('td.muted', { title: e.lastModifiedUtc }, fmtAgo(e.lastModifiedUtc))));
      }
      if (!(result.entries || []).length) list.append(h('tr', h('td.muted', { colspan: 3 }, 'This folder is empty.')));
      if (result.truncated) list.append(h('tr', h('td.muted', { colspan: 3 }, 'More entries than shown (maxEntries).')));
      drawUpload();
    } catch (e) {
      show(status, failure(e));
    }
  };

  const enter = (fn) => (ev) => { if (ev.key === 'Enter') fn(); };
  const parent = (p) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '.');
  const go = (p) => { dir = p || '.'; list_(); };

  const drawCrumbs = () => {
    crumbs.textContent = '';
    crumbs.append(h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); go('.'); } }, root + ':'));
    if (dir === '.') return;
    let acc = '';
    for (const part of dir.split('/')) {
      acc = acc ? acc + '/' + part : part;
      const target = acc;
      crumbs.append(' / ', h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); go(target); } }, part));
    }
  };

  // open_ previews a file: an image from its bytes, text from files.read_file, anything
  // else described; with a download button.
  const open_ = async (e) => {
    const head = h('div.preview-head', h('strong.mono', e.relativePath), h('span.muted', ' ', fmtBytes(e.sizeBytes), ' · ', e.mimeType || ''));
    const dl = h('button.small#files-download', { type: 'button' }, 'Download');
    dl.addEventListener('click', () => download(e, dl));
    show(preview, head, h('div.row-buttons', dl), h('p.muted', 'Loading…'));
    const body = h('div#files-preview-body');
    try {
      if ((e.mimeType || '').startsWith('image/') && e.mimeType !== 'image/svg+xml') {
        const src = await bytesURL(e);
        body.append(h('img#files-image', { src, alt: e.name, class: 'preview-img' }));
      } else if (can('files.read_file')) {
        const { result } = await run(sid, 'files.read_file', { root, path: e.relativePath, maxBytes: 65536, encoding: 'auto' });
        if (result.contentType === 'text') body.append(h('pre.code#files-text', result.text));
        else body.append(h('p.muted', `Binary content (${fmtBytes(result.sizeBytes)}): download it to open it.`));
        if (result.truncated) body.append(h('p.muted', `The first ${fmtBytes(result.bytesRead)} of ${fmtBytes(result.sizeBytes)}.`));
      } else {
        body.append(h('p.muted', 'The app offers no files.read_file to preview with.'));
      }
    } catch (err) {
      body.append(failure(err));
    }
    preview.lastChild.remove();
    preview.append(body);
  };

  // bytesURL returns a URL of a file's bytes: the host's copy of a binary download, else a
  // blob of files.read_file's base64 (up to 1 MiB).
  const bytesURL = async (e) => {
    if (can('files.begin_binary_download')) {
      const { result, urls } = await run(sid, 'files.begin_binary_download', { root, path: e.relativePath });
      const u = urls[result.transferId];
      if (u) return u;
    }
    const { result } = await run(sid, 'files.read_file', { root, path: e.relativePath, maxBytes: 1048576, encoding: 'base64' });
    return URL.createObjectURL(new Blob([b64(result.base64)], { type: e.mimeType }));
  };

  const b64 = (s) => Uint8Array.from(atob(s || ''), (c) => c.charCodeAt(0));

  // download saves a file: through the host's copy when the app has the binary download,
  // else assembled from files.download_file's chunks.
  const download = async (e, button) => {
    button.disabled = true;
    const label = button.textContent;
    try {
      let url = null;
      if (can('files.begin_binary_download')) {
        const { result, urls } = await run(sid, 'files.begin_binary_download', { root, path: e.relativePath });
        url = urls[result.transferId];
      } else if (can('files.download_file')) {
        if (e.sizeBytes > maxChunked) throw new Error(`${fmtBytes(e.sizeBytes)} is more than the page assembles (${fmtBytes(maxChunked)})`);
        const parts = [];
        let args = { root, path: e.relativePath, maxBytes: 1048576, encoding: 'base64' };
        for (;;) {
          const { result } = await run(sid, 'files.download_file', args);
          parts.push(b64(result.base64));
          button.textContent = `${fmtBytes(result.offsetBytes + result.bytesRead)} of ${fmtBytes(result.sizeBytes)}`;
          if (!result.nextRequest) break;
          args = result.nextRequest.arguments; // as sent: its integers are strings
        }
        url = URL.createObjectURL(new Blob(parts, { type: e.mimeType || 'application/octet-stream' }));
      } else {
        throw new Error('the app offers neither files.begin_binary_download nor files.download_file');
      }
      if (!url) throw new Error('the host received no file');
      const a = h('a', { href: url, download: e.name });
      document.body.append(a);
      a.click();
      a.remove();
      preview.querySelector('#files-saved')?.remove();
      preview.append(h('p.muted#files-saved', 'Saved ', h('a', { href: url, download: e.name }, e.name), '.'));
    } catch (err) {
      preview.append(failure(err));
    } finally {
      button.disabled = false;
      button.textContent = label;
    }
  };

  // drawUpload offers files.push_file into the folder shown, or says why not.
  const drawUpload = () => {
    upload.textContent = '';
    const t = tools.get('files.push_file');
    if (!t) return;
    if (!t.ok) {
      upload.append(h('p.notice#files-upload-denied', 'Uploading is not allowed: ', t.tool.denial?.reason || 'files.push_file is not executable.'));
      return;
    }
    const input = h('input#files-push-input', { type: 'file', 'aria-label': 'File to upload' });
    const over = h('input#files-push-overwrite', { type: 'checkbox' });
    const go_ = h('button.small#files-push', { type: 'button' }, 'Upload here');
    const msg = pushed;
    go_.addEventListener('click', async () => {
      msg.textContent = '';
      const f = input.files[0];
      if (!f) { msg.append(h('p.muted', 'Choose a file first.')); return; }
      if (f.size > maxUpload) { msg.append(h('div.error-card', `${fmtBytes(f.size)} is more than an upload carries (${fmtBytes(maxUpload)}).`)); return; }
      go_.disabled = true;
      try {
        const bytes = new Uint8Array(await f.arrayBuffer());
        let bin = '';
        for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
        const { result } = await run(sid, 'files.push_file', { root, directoryPath: dir, fileName: f.name, contentBase64: btoa(bin), overwrite: over.checked });
        msg.append(h('p.muted#files-pushed', `${result.operation === 'overwritten' ? 'Replaced' : 'Uploaded'} ${result.relativePath} (${fmtBytes(result.sizeBytes)}).`));
        await list_();
      } catch (err) {
        msg.append(failure(err));
      } finally {
        go_.disabled = false;
      }
    });
    upload.append(h('div.panel', h('div.panel-head', h('h2', 'Upload into this folder')),
      h('div.row-buttons', input, h('label.check', over, ' replace an existing file'), go_), pushed));
  };

  rootPick.addEventListener('change', () => { root = rootPick.value; dir = '.'; list_(); });
  refresh.addEventListener('click', () => list_());

  (async () => {
    try {
      tools = await usableTools(sid);
    } catch (e) {
      show(status, failure(e));
      return;
    }
    if (gone) return;
    if (!tools.has('files.list_directory')) {
      main.querySelector('.files-page .split').replaceWith(h('div.empty#files-none', h('h2', 'No file tools'),
        h('p.muted', 'This app offers no files.list_directory: its SDK has no file tools, or the app did not register them.')));
      return;
    }
    list_();
  })();

  return () => { gone = true; };
}

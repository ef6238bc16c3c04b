// How a call's outcome is shown: a status line, the error (code, message, retryable,
// details) or the result as a JSON tree, with received images inline.

import { h, fmtMs, fmtBytes } from './util.js';
import { jsonTree, images } from './jsontree.js';

// errorCard shows a tool error or a host refusal.
export function errorCard(err) {
  if (!err) return h('div.error-card', 'Unknown error.');
  const kindText = {
    denied: 'Denied by policy', unavailable: 'Unavailable', invalid: 'Invalid request', failed: 'The tool failed',
  }[err.kind] || 'Error';
  return h('div.error-card', { role: 'alert' },
    h('div.error-head', h('strong', kindText), h('code.code-badge', err.code),
      err.retryable ? h('span.badge.retry', 'retryable') : h('span.badge.dim', 'not retryable'),
      err.refusedByHost ? h('span.badge.dim', { title: 'The host refused to send the call: the app never saw it.' }, 'refused by the host') : null),
    h('p.error-message', err.message),
    err.details !== undefined ? h('div', h('div.muted.small', 'details'), jsonTree(err.details, { openDepth: 3 })) : null);
}

// outcome renders a CallAnswer (call + artifactUrls).
export function outcome(answer) {
  const c = answer.call;
  const urls = answer.artifactUrls || {};
  const box = h('div.outcome', { dataset: { success: String(c.success) } });
  box.append(h('div.outcome-head',
    c.success ? h('span.badge.ok', 'success') : h('span.badge.err', 'error'),
    h('span.mono', c.toolId), h('span.muted', fmtMs(c.durationMs))));
  if (!c.success) {
    box.append(errorCard(c.error));
    return box;
  }
  const pics = images(c.result, urls);
  if (pics.length) {
    box.append(h('div.gallery', pics.map((p) => h('figure',
      h('a', { href: p.url, target: '_blank', rel: 'noopener' }, h('img.evidence', { src: p.url, alt: p.name })),
      h('figcaption', p.name + (p.width ? ` · ${p.width} × ${p.height}` : ''))))));
  }
  if (c.artifacts?.length) {
    box.append(h('ul.artifacts', c.artifacts.map((a) => h('li',
      urls[a.transferId] ? h('a', { href: urls[a.transferId], target: '_blank', rel: 'noopener' }, a.fileName || a.transferId) : h('span', a.fileName || a.transferId),
      h('span.muted', ` ${a.mimeType || ''} · ${fmtBytes(a.sizeBytes)} · ${a.status}`), a.error ? h('span.err-text', ' ' + a.error) : null))));
  }
  box.append(jsonTree(c.result, { artifactUrls: urls, openDepth: 3 }));
  return box;
}

// A collapsible JSON tree (details/summary: keyboard-accessible as it is). Objects that
// describe a received image (an ASFT descriptor whose transfer has a URL) show the image.

import { h } from './util.js';

const MAX_CHILDREN = 500; // a huge array shows its first elements and a count

// jsonTree renders value. artifactUrls maps transfer ids to URLs; openDepth says how many
// levels start expanded.
export function jsonTree(value, { artifactUrls = {}, openDepth = 2 } = {}) {
  return h('div.json', node(value, null, 0, artifactUrls, openDepth));
}

function node(v, key, depth, urls, openDepth) {
  const label = key === null ? null : h('span.k', key + ': ');
  if (v === null || typeof v !== 'object') {
    return h('div.leaf', label, scalar(v));
  }
  const isArr = Array.isArray(v);
  const entries = isArr ? v.map((x, i) => [String(i), x]) : Object.entries(v);
  const summary = h('summary', label, h('span.t', isArr ? `[${entries.length}]` : `{${entries.length}}`),
    preview(v, isArr, entries));
  const d = h('details', summary);
  d.open = depth < openDepth;
  const img = imageOf(v, urls);
  if (img) {
    d.open = true;
    d.append(h('div.inline-img', h('a', { href: img, target: '_blank', rel: 'noopener' },
      h('img', { src: img, alt: v.fileName || 'artifact', loading: 'lazy' }))));
  }
  // Children are built when first opened: big results stay cheap.
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const box = h('div.children');
    for (const [k, x] of entries.slice(0, MAX_CHILDREN)) box.append(node(x, k, depth + 1, urls, openDepth));
    if (entries.length > MAX_CHILDREN) box.append(h('div.muted', `… ${entries.length - MAX_CHILDREN} more`));
    d.append(box);
  };
  if (d.open) build();
  d.addEventListener('toggle', build);
  return d;
}

function scalar(v) {
  if (typeof v === 'string') return h('span.s', JSON.stringify(v));
  if (typeof v === 'number') return h('span.n', String(v));
  if (typeof v === 'boolean') return h('span.b', String(v));
  return h('span.z', 'null');
}

function preview(v, isArr, entries) {
  if (isArr || entries.length === 0) return null;
  const bits = [];
  for (const key of ['id', 'toolId', 'type', 'code', 'label', 'text', 'title', 'status']) {
    if (typeof v[key] === 'string' || typeof v[key] === 'number') bits.push(`${key}: ${v[key]}`);
    if (bits.length === 2) break;
  }
  return bits.length ? h('span.pv', ' ' + bits.join(', ')) : null;
}

// imageOf returns the URL of the image an ASFT descriptor stands for, if it arrived.
export function imageOf(v, urls) {
  if (!v || typeof v.transferId !== 'string') return null;
  const url = urls[v.transferId];
  if (!url) return null;
  const mime = v.mimeType || '';
  return mime.startsWith('image/') ? url : null;
}

// images lists every received image in a value, in document order.
export function images(v, urls, out = []) {
  if (v && typeof v === 'object') {
    const img = imageOf(v, urls);
    if (img) out.push({ url: img, name: v.fileName || 'image', width: v.width, height: v.height });
    for (const x of Array.isArray(v) ? v : Object.values(v)) images(x, urls, out);
  }
  return out;
}

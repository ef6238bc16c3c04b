// Small helpers shared by the pages. Everything the page shows goes through textContent:
// app data is never parsed as HTML.

const csrf = document.querySelector('meta[name="csrf-token"]').content;

// h builds an element: h('div.card#x', {onclick, title, …}, children…). Strings become
// text nodes; null and false are skipped; arrays are flattened.
export function h(spec, attrs, ...children) {
  const m = /^([a-z0-9]+)((?:[.#][\w-]+)*)$/i.exec(spec);
  const el = document.createElement(m ? m[1] : 'div');
  if (m) {
    for (const part of m[2].match(/[.#][\w-]+/g) || []) {
      if (part[0] === '.') el.classList.add(part.slice(1));
      else el.id = part.slice(1);
    }
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = [el.className, v].filter(Boolean).join(' ');
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

// put appends children to el as h does (null and false skipped, arrays flattened).
export function put(el, ...children) {
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// ApiError is a failure answered by the player or the host (not a tool's own failure).
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// api calls the player's JSON API; state-changing requests carry the CSRF token.
export async function api(method, path, body) {
  const opts = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
  if (method !== 'GET') {
    opts.headers['Content-Type'] = 'application/json';
    opts.headers['X-Ansight-CSRF'] = csrf;
    opts.body = body === undefined ? '{}' : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    throw new ApiError(0, 'network', 'the player is not reachable: ' + e.message);
  }
  const text = await res.text();
  let v = null;
  try { v = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!res.ok) {
    if (res.status === 401) window.dispatchEvent(new Event('ansight-locked-out'));
    throw new ApiError(res.status, v?.code || 'http_' + res.status, v?.message || res.statusText);
  }
  return v;
}

export const enc = encodeURIComponent;

export function fmtBytes(n) {
  if (n === undefined || n === null) return '';
  if (n < 1024) return n + ' B';
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (v < 10 ? v.toFixed(1) : Math.round(v)) + ' ' + units[i];
}

export function fmtMs(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms === 0) return '< 1 ms'; // the host measures calls in whole milliseconds
  if (ms < 1) return ms.toFixed(2) + ' ms';
  if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + ' ms';
  return (ms / 1000).toFixed(2) + ' s';
}

export function fmtAgo(iso) {
  if (!iso) return '';
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 86400) return Math.round(s / 3600) + ' h ago';
  return Math.round(s / 86400) + ' d ago';
}

export function fmtTime(iso) {
  const d = new Date(iso);
  return d.toLocaleTimeString([], { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0');
}

export function shortRev(rev) {
  if (!rev) return '—';
  const i = rev.indexOf(':');
  return rev.slice(i + 1, i + 13);
}

export function policyBadge(policy) {
  return h('span.badge.policy-' + (policy || 'unknown'), { title: 'policy: ' + policy }, policy || '?');
}

// copyButton copies text to the clipboard.
export function copyButton(getText, label = 'Copy') {
  const b = h('button.small', { type: 'button' }, label);
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(getText());
      b.textContent = 'Copied';
    } catch {
      b.textContent = 'Copy failed';
    }
    setTimeout(() => { b.textContent = label; }, 1200);
  });
  return b;
}

// debounce runs fn once calls stop for ms.
export function debounce(fn, ms) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

// typing reports whether a key press belongs to a text input.
export function typing(e) {
  const t = e.target;
  return t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

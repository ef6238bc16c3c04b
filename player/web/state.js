// Shared page state and a tiny event bus fed by the server-sent events.

import { api, enc } from './util.js';

export const state = {
  sessions: [],       // control.Session list, connected first
  sessionId: null,    // the session the pages work on
  batch: [],          // calls composed for the batch page: { toolId, callId, arguments }
  indexes: new Map(), // session id → { key, promise } of the compact tool index
  frames: new Map(),  // session id → the latest live frame (player.FrameInfo)
  hostGone: false,    // the host does not answer (or locked this page out): states are unknown
};

// sessionState is the state to show for session s: "unknown" while the host is gone, since
// the last state it sent may no longer hold (the 'host' event says when that changes).
export function sessionState(s) {
  return state.hostGone ? 'unknown' : s.state;
}

// hostGoneTitle explains an "unknown" state.
export const hostGoneTitle = 'The host is not running: this session\'s state is unknown';

const listeners = new Map();

// on subscribes fn to name and returns the unsubscribe function.
export function on(name, fn) {
  if (!listeners.has(name)) listeners.set(name, new Set());
  listeners.get(name).add(fn);
  return () => listeners.get(name).delete(fn);
}

export function emit(name, data) {
  for (const fn of listeners.get(name) || []) fn(data);
}

export function sessionById(id) {
  return state.sessions.find((s) => s.id === id) || null;
}

// toolIndex returns the session's compact tool index, fetched again only when the
// session's catalog or availability revision moved.
export function toolIndex(sid, force = false) {
  const s = sessionById(sid);
  const key = s ? `${s.revision}|${s.availabilityRevision}|${s.state}` : '';
  const cached = state.indexes.get(sid);
  if (!force && cached && cached.key === key && key !== '||connected') return cached.promise;
  const promise = api('GET', `/api/sessions/${enc(sid)}/tools`);
  state.indexes.set(sid, { key, promise });
  promise.catch(() => state.indexes.delete(sid));
  return promise;
}

// callTool runs one call through the player.
export function callTool(sid, req) {
  return api('POST', `/api/sessions/${enc(sid)}/call`, req);
}

// uiOperation runs one UI operation (ansight.ui-operation/v1) through the host.
export function uiOperation(sid, req) {
  return api('POST', `/api/sessions/${enc(sid)}/ui`, req);
}

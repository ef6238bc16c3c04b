// Browser tests of the ansight player, run by .ci/player-e2e.sh against
// 'ansight demo --keep-running'. A real headless Chromium (Debian's, through
// playwright-core) drives the page; every page is saved as a screenshot under ARTIFACTS.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import dgram from 'node:dgram';
import net from 'node:net';
import crypto from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chromium, errors } from 'playwright-core';

const playerURL = process.env.PLAYER_URL;
const artifacts = process.env.ARTIFACTS || join(process.cwd(), 'artifacts');
if (!playerURL) throw new Error('PLAYER_URL (the URL the host printed, with its token) is required');
const base = new URL(playerURL);
const origin = base.origin;
mkdirSync(artifacts, { recursive: true });

let context, page, profile;
const consoleErrors = [];
// The files the tests write (exports, archives, a restarted demo's screenshot and state
// dirs) go under one directory, removed after the last test: each test used to make a
// directory of its own in the system's and leave it there.
const work = mkdtempSync(join(tmpdir(), 'ansight-e2e-'));

before(async () => {
  profile = mkdtempSync(join(tmpdir(), 'ansight-e2e-profile-'));
  // A fresh profile each run (playwright passes it as --user-data-dir).
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage'], // containers often have a tiny /dev/shm
    viewport: { width: 1440, height: 900 },
    colorScheme: 'light',
  });
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(15000);
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const shot = (name) => page.screenshot({ path: join(artifacts, name + '.png'), fullPage: true });

// get sends a raw request, so that the Host header can be anything.
function get(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('requests without the token are refused', async () => {
  assert.equal((await get('/')).status, 401);
  assert.equal((await get('/api/sessions')).status, 401);
  assert.equal((await get('/api/events')).status, 401);
  assert.equal((await get('/?token=wrong')).status, 401);
  // With the token but another Host (DNS rebinding): refused too.
  assert.equal((await get(base.pathname + base.search, { Host: 'attacker.example:' + base.port })).status, 403);
  // The browser, before it has the cookie, gets the refusal page.
  const res = await page.goto(origin + '/');
  assert.equal(res.status(), 401);
  assert.match(await page.textContent('body'), /access token/);
  await shot('00-refused');
  consoleErrors.length = 0; // the refusals above are logged by the browser
});

test('the sessions list shows the demo session', async () => {
  const res = await page.goto(playerURL);
  assert.equal(res.status(), 200);
  assert.equal(new URL(page.url()).search, '', 'the token leaves the address bar');
  const cookies = await context.cookies(origin);
  assert.ok(cookies.some((c) => c.httpOnly && c.sameSite === 'Strict'), 'an HttpOnly SameSite=Strict cookie');
  const row = page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' });
  await row.waitFor();
  assert.match(await row.textContent(), /connected/);
  assert.match(await row.textContent(), /write/, 'the grant');
  assert.match(await row.textContent(), /\d+ tools/, 'the catalog');
  await page.waitForSelector('#live:not(.off)');
  await shot('01-sessions');
});

test('the screenshot and the visual tree appear, and a node click highlights its bounds', async () => {
  await page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' }).click();
  await page.waitForFunction(() => {
    const img = document.querySelector('#screen-img');
    return img && img.complete && img.naturalWidth > 0 && document.querySelectorAll('#tree .node').length > 3;
  });
  const node = page.locator('#tree .node').filter({ has: page.locator('.nauto') }).nth(1);
  const nodeId = await node.getAttribute('data-node-id');
  await node.click();
  const hl = page.locator('#highlight');
  await hl.waitFor({ state: 'visible' });
  const box = await hl.boundingBox();
  const img = await page.locator('#screen-img').boundingBox();
  assert.ok(box.width > 4 && box.height > 4, 'the highlight has a size');
  assert.ok(box.x >= img.x - 2 && box.y >= img.y - 2 && box.x + box.width <= img.x + img.width + 2 &&
    box.y + box.height <= img.y + img.height + 2, 'the highlight lies on the screenshot');
  const ref = JSON.parse(await page.textContent('#node-ref'));
  assert.equal(ref.nodeId, nodeId);
  assert.match(ref.snapshotId, /^native:/);
  assert.ok(ref.revision >= 1);
  // The bounds match the node's own: scale the highlight back to screen points.
  const props = await page.textContent('#node-details');
  const m = /x (\d+(?:\.\d+)?), y (\d+(?:\.\d+)?), (\d+(?:\.\d+)?) × (\d+(?:\.\d+)?)/.exec(props);
  assert.ok(m, 'bounds are listed');
  const k = img.width / (await page.evaluate(() => document.querySelector('#screen-img').naturalWidth));
  assert.ok(Math.abs((box.x - img.x) / k - Number(m[1])) < 3 && Math.abs(box.width / k - Number(m[3])) < 3, 'the highlight is the node\'s bounds');
  await shot('02-session-view');
  // Clicking on the screen selects the node there.
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForSelector(`#tree .node.selected[data-node-id="${nodeId}"]`);
  // Highlight on device: the app draws an overlay over the node in its own frames.
  await page.click('#highlight-on-device');
  await page.locator('.status .notice', { hasText: 'Highlighted on the device' }).waitFor();
  // Act: the host taps the node (as ansight ui), and the page captures again.
  assert.equal(nodeId, 'editor.back', 'the walkthrough leaves the editor open');
  await page.locator('#node-details button', { hasText: /^tap$/ }).click();
  await page.waitForSelector('#tree .node[data-node-id="list.screen"]');
});

test('the tools page finds ui.perform_action', async () => {
  await page.keyboard.press('3');
  await page.waitForSelector('#tool-search');
  await page.waitForSelector('.tool-item');
  await page.keyboard.press('/');
  await page.keyboard.type('perform');
  const item = page.locator('.tool-item[data-tool-id="ui.perform_action"]');
  await item.waitFor();
  const ids = await page.locator('.tool-item').evaluateAll((els) => els.map((e) => e.dataset.toolId));
  assert.ok(ids.length < 5 && ids.every((id) => id.startsWith('ui.')), 'only tools that mention it: ' + ids);
  await item.click();
  await page.waitForSelector('#tool-detail [data-path="$.reference"]');
  assert.ok(await page.locator('[data-path="$.reference.nodeId"] input').count() === 1, 'the reference is a nested form');
  assert.ok(await page.locator('[data-path="$.action"] input').count() === 1);
  await shot('03-tools-search');
});

async function openTool(id) {
  await page.fill('#tool-search', '');
  await page.click(`.tool-item[data-tool-id="${id}"]`);
  await page.waitForFunction((tid) => document.querySelector('#tool-detail .tool-meta')?.textContent.includes(tid), id);
}

test('the generated form runs a read tool and renders the result', async () => {
  await openTool('notes.get');
  // Validation messages come from the schema before anything is sent.
  await page.click('#run');
  await page.waitForSelector('[data-path="$.id"] .err:not(:empty)');
  assert.match(await page.textContent('#violations'), /id/);
  assert.ok(await page.locator('#run-anyway').isVisible());
  await shot('04-tools-validation');
  await page.fill('[data-path="$.id"] input', 'n1');
  await page.click('#run');
  const out = page.locator('#result .outcome[data-success="true"]');
  await out.waitFor();
  assert.match(await out.textContent(), /"n1"/);
  assert.match(await out.textContent(), /title/);
  // The tree collapses.
  const first = page.locator('#result .json > details > summary').first();
  await first.click();
  assert.equal(await page.locator('#result .json > details').first().getAttribute('open'), null);
  await first.click();
  await shot('05-tools-read');
});

test('the raw JSON editor round-trips the form', async () => {
  await page.click('#tab-json');
  const raw = JSON.parse(await page.inputValue('#raw-args'));
  assert.deepEqual(raw, { id: 'n1' });
  await page.fill('#raw-args', '{"id":"n2"}');
  await page.click('#tab-form');
  assert.equal(await page.inputValue('[data-path="$.id"] input'), 'n2');
});

test('a write tool with screenshot evidence shows the image', async () => {
  await openTool('notes.create');
  await page.fill('[data-path="$.title"] input', 'From the player');
  await page.fill('[data-path="$.body"] textarea', 'Written in a real browser.');
  await page.check('#ev-shot');
  await page.check('#ev-tree');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector('#result .outcome[data-success="true"]');
  await page.waitForFunction(() => {
    const img = document.querySelector('#result img.evidence');
    return img && img.complete && img.naturalWidth > 100;
  });
  assert.match(await page.textContent('#result'), /From the player/);
  await shot('06-tools-write-evidence');
});

test('a denied tool shows its denial', async () => {
  await openTool('notes.delete_all');
  const denial = page.locator('#denial');
  await denial.waitFor();
  assert.match(await denial.textContent(), /tool_policy_not_granted/);
  assert.match(await denial.textContent(), /critical/);
  assert.match(await page.locator('.tool-item[data-tool-id="notes.delete_all"]').textContent(), /denied/);
  await page.click('#run');
  const err = page.locator('#result .error-card');
  await err.waitFor();
  assert.match(await err.textContent(), /tool_policy_not_granted/);
  assert.match(await err.textContent(), /refused by the host/);
  assert.match(await err.textContent(), /not retryable/);
  await shot('07-tools-denied');
});

test('a batch runs and shows per-item outcomes', async () => {
  await page.keyboard.press('4');
  await page.waitForSelector('#batch-tool');
  for (const id of ['notes.list', 'app.get_state', 'notes.get']) {
    await page.fill('#batch-tool', id);
    await page.keyboard.press('Enter');
  }
  // The third call fails (no such note); continue-on-error runs every call anyway.
  const args = page.locator('.batch-item textarea');
  await args.nth(2).fill('{"id":"n404"}');
  await page.check('#continue-on-error');
  await page.click('#batch-run');
  const rows = page.locator('#batch-result table.batch-results tbody tr[data-index]');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 3);
  assert.match(await rows.nth(0).textContent(), /ok/);
  assert.match(await rows.nth(2).textContent(), /not_found|n404|note/i);
  await shot('08-batch');
});

test('the traffic page lists the calls just made', async () => {
  await page.keyboard.press('5');
  await page.waitForSelector('#traffic-body tr');
  const body = page.locator('#traffic-body');
  await page.waitForFunction(() => document.querySelectorAll('#traffic-body tr[data-type="tool.call"]').length > 3);
  const text = await body.textContent();
  for (const t of ['notes.create', 'notes.get', 'notes.delete_all' /* never sent */].slice(0, 2)) assert.match(text, new RegExp(t.replace('.', '\\.')));
  assert.ok(await page.locator('#traffic-body tr[data-type="tool.batch"]').count() >= 1, 'the batch');
  assert.ok(await page.locator('#traffic-body tr[data-kind="transfer"]').count() >= 1, 'the screenshot transfer');
  // A call the host refused never travelled: it is listed as refused, never as a request.
  const refused = page.locator('#traffic-body tr[data-kind="denied"]', { hasText: 'notes.delete_all' });
  assert.ok(await refused.count() >= 1, 'the refused call is listed as refused');
  assert.match(await refused.first().textContent(), /not sent/);
  assert.equal(await page.locator('#traffic-body tr[data-kind="request"]', { hasText: 'notes.delete_all' }).count(), 0,
    'a call the host refused never travelled');
  // Filters: by tool, then by outcome.
  await page.selectOption('#traffic-tool', 'notes.create');
  const visible = await page.locator('#traffic-body tr:visible').allTextContents();
  assert.ok(visible.length >= 2 && visible.every((r) => r.includes('notes.create')));
  await page.selectOption('#traffic-tool', '');
  await page.selectOption('#traffic-outcome', 'error');
  const errors = await page.locator('#traffic-body tr:visible').allTextContents();
  assert.ok(errors.length >= 1 && errors.every((r) => /error/.test(r)));
  await page.selectOption('#traffic-outcome', '');
  // Live: calls made elsewhere (the API, as the CLI would) show up without a reload: a large
  // result travels compressed, a generated file as an ASFT transfer of several frames.
  const before = await page.locator('#traffic-body tr').count();
  await page.evaluate(async () => {
    const csrf = document.querySelector('meta[name="csrf-token"]').content;
    const sid = decodeURIComponent(location.hash.split('/')[2]);
    for (const call of [{ toolId: 'data.large_result', arguments: { sizeBytes: 200000 } },
      { toolId: 'files.generate', arguments: { sizeBytes: 300000, pattern: 'random' } }]) {
      await fetch(`/api/sessions/${encodeURIComponent(sid)}/call`, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Ansight-CSRF': csrf }, body: JSON.stringify(call),
      });
    }
  });
  await page.waitForFunction((n) => document.querySelectorAll('#traffic-body tr').length >= n + 5, before);
  const gz = page.locator('#traffic-body tr', { hasText: 'data.large_result' }).filter({ hasText: 'gzip −' });
  await gz.first().waitFor();
  const file = page.locator('#traffic-body tr[data-kind="transfer"]', { hasText: 'generated' }).first();
  await file.waitFor();
  assert.match(await file.textContent(), /\d+ frames/);
  assert.match(await file.textContent(), /\/s/, 'throughput');
  assert.doesNotMatch(await page.textContent('#traffic-stats'), /saved by gzip\s*0 B/);
  await page.selectOption('#traffic-kind', 'calls');
  assert.equal(await page.locator('#traffic-body tr[data-type="tool.query"]:visible').count(), 0);
  await shot('09-traffic');
});

test('the dark theme follows the system setting', async () => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.keyboard.press('3');
  await page.waitForSelector('.tool-item');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, 'rgb(246, 247, 249)');
  await openTool('ui.get_screenshot');
  await shot('10-tools-dark');
  await page.keyboard.press('2');
  await page.waitForFunction(() => document.querySelector('#screen-img')?.naturalWidth > 0);
  await shot('11-session-view-dark');
  await page.emulateMedia({ colorScheme: 'light' });
});

// officialApp plays an app built with the official .NET SDK, byte for byte: local
// enrollment over UDP, the WebSocket upgrade with the token in the query, session.open,
// then crash.handoff of its previous process's report and session.complete. Frames are
// written and read by hand: node 20 has no WebSocket client.
async function officialApp(discovery, wsPort) {
  const appId = 'com.example.official';
  const psid = crypto.randomBytes(16).toString('hex');
  const [dhost, dport] = [discovery.slice(0, discovery.lastIndexOf(':')), Number(discovery.slice(discovery.lastIndexOf(':') + 1))];
  const result = await new Promise((resolve, reject) => {
    const sock = dgram.createSocket('udp4');
    sock.on('message', (m) => { sock.close(); resolve(JSON.parse(m.toString())); });
    sock.on('error', reject);
    const req = JSON.stringify({ type: 'ENROLLMENT_CONNECT', ver: 2, requestId: crypto.randomBytes(16).toString('base64url'),
      enrollmentMode: 'local', inviteId: 'local:' + appId, appId, deviceId: 'Zm9vYmFyYmF6cXV4cXV1eA', deviceName: 'Pixel 8 (emulator)',
      accessToken: crypto.randomBytes(32).toString('base64url'), processSessionId: psid });
    sock.send(req, dport, dhost);
  });
  assert.equal(result.reason, 'Ok');
  const sock = net.connect(wsPort, '127.0.0.1');
  await new Promise((resolve) => sock.once('connect', resolve));
  sock.write(`GET /ws?token=${result.webSocketToken} HTTP/1.1\r\nHost: 10.0.2.2:${wsPort}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
    `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  let buf = Buffer.alloc(0);
  const waiters = [];
  sock.on('data', (d) => { buf = Buffer.concat([buf, d]); waiters.splice(0).forEach((w) => w()); });
  const more = () => new Promise((resolve) => waiters.push(resolve));
  while (buf.indexOf('\r\n\r\n') < 0) await more();
  assert.match(buf.toString('latin1', 0, 12), /^HTTP\/1\.1 101/);
  buf = buf.subarray(buf.indexOf('\r\n\r\n') + 4);
  const send = (text) => { // one masked text frame
    const payload = Buffer.from(text);
    const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(payload.length)); return b; })()]);
    const mask = crypto.randomBytes(4);
    sock.write(Buffer.concat([head, mask, payload.map((b, i) => b ^ mask[i % 4])]));
  };
  const next = async () => { // the next text message from the host (unmasked, unfragmented)
    for (;;) {
      if (buf.length >= 2) {
        let len = buf[1] & 0x7f, off = 2;
        if (len === 126) { len = buf.readUInt16BE(2); off = 4; }
        if (len === 127) { len = Number(buf.readBigUInt64BE(2)); off = 10; }
        if (buf.length >= off + len) {
          const op = buf[0] & 0x0f, data = buf.subarray(off, off + len);
          buf = buf.subarray(off + len);
          if (op === 1) return JSON.parse(data.toString());
          continue; // ping and the like: this app answers none (the host tolerates it)
        }
      }
      await more();
    }
  };
  const ask = async (id, action, payload) => {
    send(JSON.stringify({ type: 'CONTROL_REQ', id, replyTo: null, action, payload, success: true, message: null }));
    for (;;) {
      const m = await next();
      if (m.type === 'CONTROL_RESP' && m.replyTo === id) { assert.equal(m.success, true, m.message); return; }
    }
  };
  await ask('client.open', 'session.open', { clientName: 'Pixel 8', configId: 'local:' + appId, appId, openedAtUtc: new Date().toISOString() });
  const prev = crypto.randomBytes(16).toString('hex');
  await ask('client.crash', 'crash.handoff', { reportId: 'recovered-crash', targetProcessSessionId: prev, targetSessionId: null, deliveryProcessSessionId: psid,
    report: { schema: 'ansight.crash.v1', reportId: 'recovered-crash', previousProcessSessionId: prev, occurredAtUtc: '2026-09-04T02:00:00Z',
      platform: 'android', kind: 'native_crash', confidence: 'confirmed', candidate: { message: 'SIGSEGV in libgame.so' }, traceBase64: 'dHJhY2U=' } });
  await ask('client.done', 'session.complete', { reason: 'client log stream complete' });
  sock.destroy();
}

test('a crash report an official SDK hands over shows on its session page', async () => {
  const status = await page.evaluate(() => fetch('/api/status').then((r) => r.json()));
  await officialApp(status.discovery, Number(status.webSocket.slice(status.webSocket.lastIndexOf(':') + 1)));
  await page.goto(playerURL);
  await page.waitForFunction(() => document.querySelector('#session-select')?.textContent.includes('com.example.official'));
  const id = await page.evaluate(() => [...document.querySelectorAll('#session-select option')].find((o) => o.textContent.includes('com.example.official')).value);
  await page.evaluate((sid) => { location.hash = `#/s/${encodeURIComponent(sid)}`; }, id);
  const row = page.locator('#records table.crashes tbody tr');
  await row.first().waitFor();
  assert.match(await page.textContent('#records'), /Crash reports \(1\)/);
  assert.match(await row.first().textContent(), /native_crash/);
  assert.match(await row.first().textContent(), /SIGSEGV in libgame\.so/);
  const report = page.locator('#records a', { hasText: 'report.json' });
  const href = await report.getAttribute('href');
  const body = await page.evaluate((u) => fetch(u).then((r) => r.json()), href);
  assert.equal(body.reportId, 'recovered-crash');
  await shot('12-crash-report');
});

// demoSession is the demo app's session id, as the page lists it.
async function demoSession() {
  await page.goto(playerURL);
  const row = page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' });
  await row.waitFor();
  return row.getAttribute('data-session');
}

// frameSrc is the source of the timeline's screen image once it has loaded.
async function frameSrc() {
  await page.waitForFunction(() => {
    const img = document.querySelector('#tl-frame');
    return img && !img.hidden && img.complete && img.naturalWidth > 0;
  });
  return page.getAttribute('#tl-frame', 'src');
}

// What the live tests wait for comes with the frames the demo streams (one every 2 s, as
// the host asks), so their waits are counted in frames, not seconds: a page that has not
// shown what it waits for after framesMissed new frames were recorded fails, and so does
// one whose app recorded no new frame for hangGuardMs (a hang guard only: a busy machine
// slows the frames, it does not stop them). A fixed timeout failed at load 15.
const framesMissed = 10;
const hangGuardMs = 120_000;

// newestFrame is the sequence number of the newest frame the host recorded for sid (0: none).
async function newestFrame(sid) {
  const p = await page.evaluate((u) => fetch(u).then((r) => r.json()),
    `/api/sessions/${encodeURIComponent(sid)}/recording?kind=frame&newest=true&limit=1`);
  return p.records?.[0]?.seq ?? 0;
}

// untilFrames waits until fn (a page function of arg) holds, as long as sid's frames keep
// coming (see framesMissed and hangGuardMs); what names the wait in the failure.
async function untilFrames(sid, what, fn, arg) {
  let seq = await newestFrame(sid), seen = 0, since = Date.now();
  for (;;) {
    try {
      return await page.waitForFunction(fn, arg, { timeout: 1000 });
    } catch (e) {
      if (!(e instanceof errors.TimeoutError)) throw e;
    }
    const now = await newestFrame(sid);
    if (now !== seq) {
      seq = now;
      seen++;
      since = Date.now();
    }
    if (seen >= framesMissed) {
      throw new Error(`${what}: not so after ${seen} new frames of the app (newest frame record ${seq})`);
    }
    if (Date.now() - since > hangGuardMs) {
      throw new Error(`${what}: hang guard: the app recorded no new frame for ${hangGuardMs / 1000} s (newest frame record ${seq}, ${seen} new frames seen while waiting)`);
    }
  }
}

test('the screen page shows the live screen the app streams', async () => {
  const id = await demoSession();
  await page.evaluate((sid) => { location.hash = `#/s/${encodeURIComponent(sid)}`; }, id);
  // The demo streams its screen as the host asked (device.profile).
  await untilFrames(id, 'the Live button is enabled', () => document.querySelector('#mode-live')?.disabled === false);
  await page.click('#mode-live');
  assert.equal(await page.getAttribute('#mode-live', 'aria-pressed'), 'true');
  await untilFrames(id, 'the screen shows a live frame', () => {
    const img = document.querySelector('#screen-img');
    return img && /\/(frame|recording\/\d+\/file)/.test(img.getAttribute('src') || '') && img.complete && img.naturalWidth > 0;
  });
  await shot('13-live-screen');
});

test('the timeline of a live session follows the newest frame', async () => {
  const id = await demoSession();
  await page.evaluate((sid) => { location.hash = `#/s/${encodeURIComponent(sid)}/timeline`; }, id);
  await untilFrames(id, 'the timeline shows a frame', () => {
    const img = document.querySelector('#tl-frame');
    return img && !img.hidden && img.complete && img.naturalWidth > 0;
  });
  const first = await page.getAttribute('#tl-frame', 'src');
  assert.equal(await page.getAttribute('#tl-follow', 'aria-pressed'), 'true');
  // The next frame the app streams moves the cursor and the screen by themselves.
  await untilFrames(id, 'the timeline follows the newest frame', (src) => document.querySelector('#tl-frame').getAttribute('src') !== src, first);
  assert.ok(await page.locator('.tl-lane-track[data-lane="call"] .tl-mark.call').count() >= 3, 'the demo tour\'s calls');
  // The tour's sync is a real HTTP request through the SDK's RoundTripper: the Network lane has it.
  assert.ok(await page.locator('.tl-lane-track[data-lane="network"] .tl-mark').count() >= 1, 'the demo sync\'s network request');
  await untilFrames(id, 'the timeline lists the sync\'s PUT', () =>
    [...document.querySelectorAll('#tl-list tr[data-lane="network"]')].some((tr) => tr.textContent.includes('PUT')));
  await shot('14-timeline-live');
});

test('Save as flow downloads the session\'s calls as a flow that passes against a fresh demo', async () => {
  const ansight = process.env.ANSIGHT;
  assert.ok(ansight, 'ANSIGHT (the binary) is required');
  const id = await demoSession();
  await page.evaluate((sid) => { location.hash = `#/s/${encodeURIComponent(sid)}/timeline`; }, id);
  // Enabled once the records are loaded (before, the range would be empty); no mark: from
  // the recording's start to the cursor (the newest frame, following).
  await page.locator('#tl-save-flow:not([disabled])').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#tl-save-flow')]);
  assert.match(download.suggestedFilename(), /\.flow\.yaml$/);
  const dir = mkdtempSync(join(tmpdir(), 'ansight-e2e-flow-'));
  try {
    const file = join(dir, download.suggestedFilename());
    await download.saveAs(file);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /^schema: ansight\.flow\/v1$/m);
    assert.match(text, /- call: "notes\.create"/, 'the demo tour\'s calls');
    // The player's own tap on the back button (the session page's Act) is a selector step.
    assert.match(text, /- tap: \{"automationId": "backButton"\}/);
    assert.doesNotMatch(text, /"snapshotId": "native:[^"]*", "revision": [0-9]+, "nodeId"[^\n]*\n    save/, 'no node reference of this run is replayed as a success');
    const run = spawnSync(ansight, ['test', 'run', file, '--demo'], { encoding: 'utf8', env: { ...process.env, ANSIGHT_STATE_DIR: join(dir, 'state') } });
    assert.equal(run.status, 0, run.stdout + run.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the timeline scrubs an imported recording and shows a call\'s request and response', async () => {
  // Export the demo session's recording and import it back: a disconnected recording.
  const ansight = process.env.ANSIGHT;
  assert.ok(ansight, 'ANSIGHT (the binary) is required');
  const id = await demoSession();
  const zip = join(mkdtempSync(join(work, 'export-')), 'demo.zip');
  execFileSync(ansight, ['session', 'export', id, '-o', zip, '--redact', 'default'], { env: process.env });
  const imported = JSON.parse(execFileSync(ansight, ['session', 'import', zip, '--json'], { env: process.env }).toString());
  assert.equal(imported.recording.origin, 'import');

  await page.goto(playerURL);
  const row = page.locator(`#recordings tr[data-recording="${imported.id}"]`);
  await row.waitFor();
  assert.match(await row.textContent(), /imported/);
  await row.click();
  await page.waitForSelector('#tl-summary:not(:empty)');
  assert.match(await page.textContent('.page-head .badge'), /imported/);
  assert.equal(await page.isHidden('#tl-follow'), true, 'a recording is not followed');
  const frames = Number(/(\d+) frames/.exec(await page.textContent('#tl-summary'))[1]);
  assert.ok(frames >= 2, `${frames} frames recorded`);

  // Scrub: the start shows the first frame, the end the last, with the keyboard as a user
  // would; a click on the lanes moves the cursor there.
  const scrub = page.locator('#tl-scrub');
  await scrub.focus();
  await page.keyboard.press('Home');
  const startSrc = await frameSrc();
  assert.match(await page.textContent('#tl-frame-info'), new RegExp(`^frame 1 of ${frames}`));
  await page.keyboard.press('End');
  await page.waitForFunction((src) => document.querySelector('#tl-frame').getAttribute('src') !== src, startSrc);
  const endSrc = await frameSrc();
  assert.match(await page.textContent('#tl-frame-info'), new RegExp(`^frame ${frames} of ${frames}`));
  const box = await page.locator('.tl-lane-track[data-lane="frame"]').boundingBox();
  await page.mouse.click(box.x + box.width * 0.5, box.y + box.height / 2);
  const middle = Number(await scrub.inputValue());
  assert.ok(middle > 0 && middle < Number(await scrub.getAttribute('max')), 'the cursor is inside the recording');
  await page.click('#tl-prev');
  assert.notEqual(await frameSrc(), endSrc);

  // A call: its request and its response, bodies included.
  const call = page.locator('#tl-list tr[data-lane="call"]', { hasText: 'notes.create' }).first();
  await call.click();
  const details = page.locator('#tl-call');
  await details.waitFor();
  const text = await details.textContent();
  assert.match(text, /Request/);
  assert.match(text, /Response/);
  assert.match(text, /"Try ansight"/, 'the request\'s arguments and the response\'s result');
  assert.match(text, /ok/);
  await shot('15-timeline-replay');
  // The markers on the lanes open calls too (the last one: calls of one instant overlap).
  const marker = page.locator('.tl-lane-track[data-lane="call"] .tl-mark.call').last();
  const label = await marker.getAttribute('aria-label');
  await marker.click();
  await page.waitForFunction((l) => document.querySelector('#tl-call h3')?.textContent === l, label);
});

test('ansight player --archive shows an archive with no host: its timeline, and says what needs one', async () => {
  // The demo's recording exported in the official host's format, then served by a player of
  // its own: no host behind it, nothing imported.
  const ansight = process.env.ANSIGHT;
  const id = await demoSession();
  const zip = join(mkdtempSync(join(work, 'archive-')), 'official.zip');
  execFileSync(ansight, ['session', 'export', id, '-o', zip, '--format', 'official'], { env: process.env });
  const env = { ...process.env, ANSIGHT_STATE_DIR: mkdtempSync(join(work, 'nohost-')) };
  const served = spawn(ansight, ['player', '--archive', zip, '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => served.on('exit', (code) => resolve(code)));
  try {
    const access = await new Promise((resolve, reject) => {
      let out = '';
      served.stdout.on('data', (c) => {
        out += c;
        if (out.includes('\n')) resolve(JSON.parse(out));
      });
      served.on('exit', (code) => reject(new Error(`ansight player --archive exited ${code}`)));
    });
    assert.equal(access.schema, 'ansight.player/v1');
    assert.match(access.url, new RegExp(`#/s/${id}/timeline$`));
    const p2 = await context.newPage();
    p2.on('pageerror', (e) => consoleErrors.push(e.message));
    try {
      await p2.goto(access.url);
      await p2.waitForSelector('#tl-summary:not(:empty)');
      assert.match(await p2.textContent('.page-head .badge'), /imported/);
      // Nothing is live: the indicator says it reads an archive, greyed, not "live".
      await p2.waitForFunction(() => document.querySelector('#live').textContent === 'archive');
      assert.ok(await p2.locator('#live.off').count() === 1, 'the indicator is not lit');
      assert.match(await p2.getAttribute('#live', 'title'), /archive official\.zip/);
      const frames = Number(/(\d+) frames/.exec(await p2.textContent('#tl-summary'))[1]);
      assert.ok(frames >= 2, `${frames} frames in the archive`);
      await p2.waitForFunction(() => { const img = document.querySelector('#tl-frame'); return img && img.complete && img.naturalWidth > 0; });
      // The list is drawn after the summary, debounced (timeline.js drawListSoon): wait for
      // the row; counting at once found none on a busy machine.
      await p2.locator('#tl-list tr[data-lane="call"]', { hasText: 'notes.create' }).first().waitFor();
      await p2.screenshot({ path: join(artifacts, '16-player-archive.png'), fullPage: true });
      // The archive is listed among the recordings, and what needs a live app says so.
      await p2.evaluate((sid) => { location.hash = `#/s/${encodeURIComponent(sid)}/files`; }, id);
      await p2.waitForFunction(() => /this is the archive official\.zip, read without a host/.test(document.querySelector('main').textContent));
    } finally {
      await p2.close();
    }
    // The host's own player is untouched (its cookie is another port's).
    await page.goto(playerURL);
    await page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' }).waitFor();
  } finally {
    served.kill('SIGINT');
  }
  assert.equal(await exited, 0, 'Ctrl-C ends it with exit 0');
});

// The host stops under an open page and comes back (issue 14.2). The page started by the
// test, if any, is stopped at the end.
let restarted = null;
after(() => {
  if (restarted && restarted.exitCode === null) {
    try { execFileSync(process.env.ANSIGHT, ['host', 'stop'], { env: process.env }); } catch { restarted.kill(); }
  }
});
// Registered after the hook above, so it runs after it (node:test runs a file's after hooks
// in order): the restarted demo, which writes its screenshot under work, has stopped.
after(() => rmSync(work, { recursive: true, force: true }));

// hostPID is the pid of the host answering on ANSIGHT_STATE_DIR.
function hostPID() {
  return JSON.parse(execFileSync(process.env.ANSIGHT, ['host', 'status', '--json'], { env: process.env }).toString()).pid;
}

// gone waits until process pid has ended.
async function gone(pid) {
  for (let i = 0; i < 600; i++) {
    try { process.kill(pid, 0); } catch { return; }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`host ${pid} did not stop`);
}

// dropNetworkErrors forgets the console errors a browser logs for refused connections and
// refused requests (expected while the host is away), keeping every other error.
function dropNetworkErrors(from) {
  const kept = consoleErrors.slice(from).filter((e) => !/Failed to load resource|ERR_CONNECTION_REFUSED|EventSource/.test(e));
  consoleErrors.length = from;
  consoleErrors.push(...kept);
}

// A 2×2 PNG, red and blue.
const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4zwAEIOI/kAAAG/ID/VxhF44AAAAASUVORK5CYII=', 'base64');

test('the Files page browses the demo\'s files, previews text, uploads and previews an image, downloads the notes database', async () => {
  const sid = await demoSession();
  await page.evaluate((id) => { location.hash = `#/s/${encodeURIComponent(id)}/files`; }, sid);
  await page.waitForSelector('#files-list tr[data-entry="welcome.txt"]');
  assert.ok(await page.locator('#files-list tr[data-entry="notes.db"]').count() === 1, 'the notes database is a file of the root');
  assert.equal(await page.inputValue('#files-root'), 'demo');
  await page.click('#files-list tr[data-entry="welcome.txt"]');
  await page.waitForFunction(() => document.querySelector('#files-text')?.textContent.includes('Files of the Ansight demo app'));

  // Upload (the demo's grant is write), then preview the image through a binary download.
  await page.setInputFiles('#files-push-input', { name: 'pixel.png', mimeType: 'image/png', buffer: png });
  await page.click('#files-push');
  await page.waitForSelector('#files-pushed');
  assert.match(await page.textContent('#files-pushed'), /Uploaded pixel\.png/);
  await page.click('#files-list tr[data-entry="pixel.png"]');
  await page.waitForFunction(() => {
    const img = document.querySelector('#files-image');
    return img && img.complete && img.naturalWidth === 2 && img.naturalHeight === 2;
  });
  await shot('20-files-image');

  // Download the SQLite file the notes are kept in.
  await page.click('#files-list tr[data-entry="notes.db"]');
  await page.waitForSelector('#files-download');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#files-download')]);
  assert.equal(dl.suggestedFilename(), 'notes.db');
  const saved = join(artifacts, 'notes.db');
  await dl.saveAs(saved);
  const { readFileSync } = await import('node:fs');
  assert.equal(readFileSync(saved).subarray(0, 15).toString(), 'SQLite format 3', 'a SQLite database');
  await shot('21-files');
});

test('the Data page lists the tables, shows a schema, pages a query and shows a refused write', async () => {
  const sid = await demoSession();
  await page.evaluate((id) => { location.hash = `#/s/${encodeURIComponent(id)}/data`; }, sid);
  await page.waitForSelector('#data-table-list tr[data-table="notes"]');
  await page.click('#data-table-list tr[data-table="notes"]');
  await page.waitForFunction(() => document.querySelector('#data-column-list')?.textContent.includes('title'));
  assert.equal(await page.inputValue('#data-sql'), 'SELECT * FROM notes');
  await page.fill('#data-sql', 'SELECT id, title FROM notes ORDER BY id');
  await page.fill('#data-max-rows', '2');
  await page.click('#data-run');
  await page.waitForFunction(() => document.querySelectorAll('#data-rows tbody tr').length === 2);
  assert.match(await page.textContent('#data-summary'), /rows 1–2 · more follow/);
  const firstPage = await page.textContent('#data-rows tbody');
  await page.click('#data-next');
  await page.waitForFunction(() => /rows 3–/.test(document.querySelector('#data-summary')?.textContent || ''));
  assert.notEqual(await page.textContent('#data-rows tbody'), firstPage, 'the next page has other rows');
  await shot('22-data');
  // A write is refused by the database itself (read-only for the tools), not only by the
  // text check: a WITH leads to a DELETE.
  await page.fill('#data-sql', 'WITH x AS (SELECT 1) DELETE FROM notes');
  await page.click('#data-run');
  await page.waitForSelector('#data-result .error-card');
  assert.match(await page.textContent('#data-result .error-card'), /database_query_failed[\s\S]*readonly database/);
  await shot('23-data-refused');
});

test('when the host stops the page says so and greys out, and recovers when it is back', async () => {
  const ansight = process.env.ANSIGHT;
  assert.ok(ansight, 'ANSIGHT (the binary) is required');
  const errorsBefore = consoleErrors.length;
  await page.goto(playerURL);
  await page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' }).first().waitFor();
  await page.waitForSelector('#live:not(.off)');
  assert.equal(await page.isHidden('#banner'), true, 'no banner while the host runs');

  const pid = hostPID();
  execFileSync(ansight, ['host', 'stop'], { env: process.env });
  await page.waitForSelector('#banner.banner-gone:not([hidden])');
  assert.match(await page.textContent('#banner'), /The host is not running\..*reconnects by itself.*ansight host run/);
  assert.ok(await page.evaluate(() => document.body.classList.contains('offline')), 'the sessions grey out');
  assert.equal(await page.textContent('#live'), 'offline');
  // What the host last said may no longer hold: no session is shown as connected, the
  // header says the host is gone, and so do the picker and the session's own pages.
  assert.match(await page.textContent('#session-count'), /^host gone · \d+ sessions?, state unknown$/);
  assert.equal(await page.locator('tr[data-session] .badge.state-connected').count(), 0, 'no session still says connected');
  const row = page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' }).first();
  assert.equal(await row.locator('.badge.state-unknown').textContent(), 'unknown');
  assert.match(await row.locator('.badge.state-unknown').getAttribute('title'), /host is not running/);
  const options = await page.locator('#session-select option').allTextContents();
  assert.ok(options.length > 0 && options.every((o) => o.endsWith('(state unknown)')), `picker: ${options}`);
  await shot('16-host-gone');

  // A host again, on the same state directory and player address: the page reconnects by
  // itself (the access token is kept in the state directory) and redraws.
  await gone(pid);
  const tmp = mkdtempSync(join(work, 'restart-'));
  restarted = spawn(ansight, ['demo', '--keep-running', '--player', base.host, '--screenshot', join(tmp, 'again.png')],
    { env: process.env, stdio: 'ignore' });
  await page.waitForSelector('#banner', { state: 'hidden', timeout: 60000 });
  await page.waitForSelector('#live:not(.off)');
  assert.equal(await page.evaluate(() => document.body.classList.contains('offline')), false);
  await page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' }).filter({ hasText: 'connected' }).first().waitFor();
  assert.match(await page.textContent('#session-count'), /^\d+ connected · \d+ disconnected$/);
  assert.equal(await page.locator('.badge.state-unknown').count(), 0, 'states are known again');
  await shot('17-host-back');
  dropNetworkErrors(errorsBefore);
});

test('a tab whose access ended says how to get in again, on the page and after a reload', async () => {
  const ansight = process.env.ANSIGHT;
  const errorsBefore = consoleErrors.length;
  await page.goto(playerURL);
  await page.waitForSelector('#live:not(.off)');
  // A new token (as after a restart that lost it): the open page is locked out.
  const fresh = JSON.parse(execFileSync(ansight, ['player', 'url', '--new-token', '--json'], { env: process.env }).toString());
  assert.equal(fresh.renewed, true);
  await page.waitForSelector('#banner.banner-locked:not([hidden])');
  assert.match(await page.textContent('#banner'), /This page's access ended:.*new access token.*ansight player open/);
  assert.equal(await page.textContent('#live'), 'locked out');
  await shot('18-locked-out');

  // Reloaded, the stale tab gets a page (styled, not a bare "Unauthorized") that says how.
  const res = await page.reload();
  assert.equal(res.status(), 401);
  assert.match(await page.textContent('h1'), /Open the player again/);
  assert.match(await page.textContent('main'), /ansight player open/);
  assert.match(await page.textContent('main'), /ansight player url/);
  const radius = await page.evaluate(() => getComputedStyle(document.querySelector('.refused-card')).borderTopLeftRadius);
  assert.equal(radius, '8px', 'the refusal page has the player\'s style');
  await shot('19-stale-tab');

  // The new URL lets the tab in again.
  assert.equal((await page.goto(fresh.url)).status(), 200);
  await page.locator('tr[data-session]', { hasText: 'com.ansight.demo.notes' }).first().waitFor();
  await page.waitForSelector('#live:not(.off)');
  dropNetworkErrors(errorsBefore);
});

test('the page logged no errors', () => {
  assert.deepEqual(consoleErrors, []);
});

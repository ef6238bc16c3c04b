// End-to-end test of `ansight mcp --demo` with the official TypeScript MCP SDK: an MCP
// client spawns the real binary over stdio (a real host and the demo app run inside it)
// and uses every meta-tool the way an agent does; a second run exposes the app's tools one
// by one; a third serves streamable HTTP with its bearer token.
//
// Run with `npm test` (node --test). The binary is $ANSIGHT_BIN, or built from this
// repository into a temporary directory.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'ansight-mcp-e2e-'));
let bin = process.env.ANSIGHT_BIN;

const META_TOOLS = [
  'ansight_call_app_tool',
  'ansight_call_app_tools',
  'ansight_describe_app_tool',
  'ansight_list_sessions',
  'ansight_read_result',
  'ansight_record_flow',
  'ansight_search_app_tools',
  'ansight_snapshot',
  'ansight_take_screenshot',
];

// The tool name pattern Claude Desktop and claude.ai enforce (a failing name hides the
// server's whole tool set); Claude Code prefixes mcp__<server>__ and keeps the result
// within 64 characters, with the README's longest server name (ansight-demo) too.
const CLIENT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
function checkName(name) {
  assert.match(name, CLIENT_NAME, `tool name ${name}`);
  assert.ok(`mcp__ansight-demo__${name}`.length <= 64, `${name} is too long with a client prefix`);
}

// pngSize reads a PNG's width and height (IHDR).
function pngSize(image) {
  assert.equal(image.mimeType, 'image/png');
  const png = Buffer.from(image.data, 'base64');
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return [png.readUInt32BE(16), png.readUInt32BE(20)];
}

before(() => {
  if (!bin) {
    bin = join(work, 'ansight');
    execFileSync('go', ['build', '-o', bin, './cmd/ansight'], { cwd: repoRoot, stdio: 'inherit' });
  }
});

after(() => rmSync(work, { recursive: true, force: true }));

// connect spawns `ansight mcp <args>` and connects a client to it.
async function connect(args, onToolsChanged) {
  const stateDir = mkdtempSync(join(work, 'state-'));
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', ...args],
    env: { ...process.env, ANSIGHT_STATE_DIR: stateDir },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  const client = new Client({ name: 'ansight-e2e', version: '1.0.0' });
  if (onToolsChanged) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, onToolsChanged);
  }
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`connect: ${err.message}\nstderr: ${stderr}`);
  }
  return { client, stderr: () => stderr, transport };
}

// plain is a result's text without the bridge's frame around app text
// (<untrusted-app-content>…</untrusted-app-content>, marked _meta "ansight/untrusted").
function plain(content) {
  const m = /^<untrusted-app-content>\n([\s\S]*)\n<\/untrusted-app-content>$/.exec(content.text);
  if (m) assert.equal(content._meta?.['ansight/untrusted'], true, 'a framed text is marked untrusted');
  return m ? m[1] : content.text;
}

// call calls a tool; the SDK validates structuredContent against the tool's outputSchema.
async function call(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(Array.isArray(res.content) && res.content.length > 0, `${name}: no content`);
  assert.equal(res.content[0].type, 'text');
  // The text is the structured content's JSON, for clients that read text only.
  if (res.structuredContent) {
    assert.deepEqual(JSON.parse(plain(res.content[0])), res.structuredContent);
  }
  return res;
}

// toolError checks a tool error result and returns its error object.
function toolError(res) {
  assert.equal(res.isError, true, `want isError, got ${res.content[0].text}`);
  const err = JSON.parse(plain(res.content[0])).error;
  assert.equal(typeof err.code, 'string');
  assert.equal(typeof err.message, 'string');
  assert.equal(typeof err.retryable, 'boolean');
  assert.ok(err.hint, `error without a hint: ${JSON.stringify(err)}`);
  return err;
}

test('ansight mcp --demo with the TypeScript SDK', { timeout: 120_000 }, async (t) => {
  // -v: the bridge logs what it does with a cancelled request.
  const { client, stderr } = await connect(['--demo', '-v']);
  const clientErrors = [];
  client.onerror = (err) => clientErrors.push(String(err?.message ?? err));
  try {
    await t.test('lists the meta-tools, with schemas, names and annotations every client accepts', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), META_TOOLS);
      for (const tool of tools) {
        checkName(tool.name);
        assert.ok(tool.description, tool.name);
        assert.equal(tool.inputSchema.type, 'object', tool.name);
        // The snapshot answers plain text, the others structured content.
        if (tool.name !== 'ansight_snapshot') assert.equal(tool.outputSchema?.type, 'object', tool.name);
        // Reading tools say so (and are idempotent); the call tools keep MCP's defaults:
        // possibly destructive, not idempotent.
        const a = tool.annotations;
        assert.equal(a.readOnlyHint === true, a.idempotentHint === true, tool.name);
        assert.equal(a.destructiveHint, undefined, tool.name);
        assert.equal(a.openWorldHint, false, tool.name);
      }
      const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
      for (const name of ['ansight_search_app_tools', 'ansight_snapshot', 'ansight_take_screenshot', 'ansight_read_result']) {
        assert.equal(byName[name].annotations.readOnlyHint, true, name);
      }
      assert.equal(byName.ansight_call_app_tool.annotations.readOnlyHint, false);
    });

    await t.test('lists the demo session', async () => {
      const res = await call(client, 'ansight_list_sessions');
      const { sessions } = res.structuredContent;
      assert.equal(sessions.length, 1);
      assert.equal(sessions[0].appId, 'com.ansight.demo.notes');
      assert.equal(sessions[0].state, 'connected');
    });

    await t.test('searches compactly: no schemas, small', async () => {
      const res = await call(client, 'ansight_search_app_tools');
      const out = res.structuredContent;
      assert.ok(out.count > 0 && out.count <= 20);
      // The demo offers more tools than one page (files, data, prefs, overlays…), so the
      // notes tools may fall past the first page: a query finds them.
      const listed = await call(client, 'ansight_search_app_tools', { query: 'notes.list' });
      assert.ok(listed.structuredContent.tools.some((x) => x.id === 'notes.list'));
      assert.ok(!res.content[0].text.includes('Schema'), 'schemas in the compact index');
      assert.ok(res.content[0].text.length < 8192);
      for (const tool of out.tools) {
        assert.ok(['read', 'write'].includes(tool.policy), `offered ${tool.id} (${tool.policy})`);
      }
      const notes = await call(client, 'ansight_search_app_tools', { query: 'note', policy: 'write', maxResults: 3 });
      assert.ok(notes.structuredContent.tools.every((x) => x.policy === 'write'));
    });

    await t.test('describes one tool with its schemas', async () => {
      const res = await call(client, 'ansight_describe_app_tool', { toolId: 'notes.create' });
      const { tool } = res.structuredContent;
      assert.equal(tool.id, 'notes.create');
      assert.equal(tool.policy, 'write');
      assert.ok(tool.argumentsSchema.properties.title);
    });

    await t.test('calls a tool', async () => {
      const res = await call(client, 'ansight_call_app_tool', {
        toolId: 'notes.create',
        arguments: { title: 'From the TypeScript SDK', body: 'e2e' },
        after: { include: ['visualTree'] },
      });
      assert.notEqual(res.isError, true, res.content[0].text);
      assert.equal(res.structuredContent.success, true);
      assert.equal(res.structuredContent.result.title, 'From the TypeScript SDK');
      assert.ok(res.structuredContent.evidence?.visualTree, 'after evidence');
    });

    await t.test('invalid arguments are a tool error the agent can fix', async () => {
      const res = await call(client, 'ansight_call_app_tool', { toolId: 'notes.create', arguments: {} });
      const err = toolError(res);
      assert.match(err.code, /arguments/);
      assert.match(err.hint, /argumentsSchema/);
    });

    await t.test('runs a batch', async () => {
      const res = await call(client, 'ansight_call_app_tools', {
        calls: [{ toolId: 'notes.list', callId: 'first' }, { toolId: 'app.get_state' }],
      });
      const out = res.structuredContent;
      assert.equal(out.success, true, res.content[0].text);
      assert.equal(out.completed, 2);
      assert.equal(out.results[0].callId, 'first');
    });

    await t.test('returns a screenshot as image content', async () => {
      const res = await call(client, 'ansight_take_screenshot', { maxWidth: 320 });
      assert.notEqual(res.isError, true, res.content[0].text);
      const image = res.content.find((c) => c.type === 'image');
      assert.ok(image, 'no image content');
      assert.equal(image.mimeType, 'image/png');
      const png = Buffer.from(image.data, 'base64');
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      assert.equal(png.readUInt32BE(16), res.structuredContent.width); // IHDR width
      assert.ok(res.structuredContent.width <= 320);
      assert.ok(res.structuredContent.path, 'saved file path');
    });

    await t.test('refuses a critical tool, saying why in terms of the demo', async () => {
      const res = await call(client, 'ansight_call_app_tool', { toolId: 'notes.delete_all' });
      const err = toolError(res);
      // Apps on this machine are granted write: critical tools are above the grant, and a
      // demo cannot be paired for more.
      assert.equal(err.code, 'tool_policy_not_granted');
      assert.equal(err.kind, 'denied');
      assert.equal(err.refusedBy, 'bridge');
      assert.equal(err.retryable, false);
      assert.match(err.hint, /demo cannot grant more/);
      assert.doesNotMatch(err.hint, /pairing/);
    });

    await t.test('lists refused tools when asked, with the reason', async () => {
      const res = await call(client, 'ansight_search_app_tools', { query: 'delete', executableOnly: false });
      const entry = res.structuredContent.tools.find((x) => x.id === 'notes.delete_all');
      assert.ok(entry, res.content[0].text);
      assert.equal(entry.policy, 'critical');
      assert.equal(entry.executable, false);
      assert.equal(entry.denial.code, 'tool_policy_not_granted');
      assert.match(entry.denial.reason, /critical grant; the session has write/);
      assert.match(res.structuredContent.grantHint, /demo/);
      const callable = await call(client, 'ansight_search_app_tools', { query: 'delete' });
      assert.ok(!callable.structuredContent.tools.some((x) => x.id === 'notes.delete_all'));
      assert.ok(callable.structuredContent.aboveGrant >= 1);
    });

    await t.test('reports an unavailable tool with what would make it available first', async () => {
      const res = await call(client, 'ansight_call_app_tool', { toolId: 'sync.push' });
      const err = toolError(res);
      assert.equal(err.kind, 'unavailable');
      // Signing in must come first: retrying the same call cannot help.
      assert.equal(err.retryable, false);
      assert.match(err.hint, /First: Call account\.sign_in/);
      const desc = await call(client, 'ansight_describe_app_tool', { toolId: 'sync.push' });
      assert.match(desc.structuredContent.tool.runtime.remediation, /account\.sign_in/);
    });

    await t.test('shows screenshot evidence as an image, its long edge capped', async () => {
      const res = await call(client, 'ansight_call_app_tool', {
        toolId: 'notes.create',
        arguments: { title: 'Seen', body: 'with a screenshot' },
        after: { include: ['screenshot'] },
      });
      assert.notEqual(res.isError, true, res.content[0].text);
      const images = res.content.filter((c) => c.type === 'image');
      assert.equal(images.length, 1, 'one image content');
      const [w, h] = pngSize(images[0]);
      assert.ok(Math.max(w, h) <= 1024, `${w}x${h}`);
      const art = res.structuredContent.artifacts.find((a) => a.mimeType === 'image/png');
      assert.match(art.image, /^shown/);
      assert.ok(art.path, 'the saved file');
    });

    await t.test('truncates a 2 MB result and pages through it', async () => {
      const res = await call(client, 'ansight_call_app_tool', { toolId: 'data.large_result', arguments: { sizeBytes: 2_000_000 } });
      assert.notEqual(res.isError, true, res.content[0].text);
      const out = res.structuredContent;
      assert.equal(out.result, undefined);
      const cut = out.resultTruncated;
      assert.ok(cut.sizeBytes >= 2_000_000, JSON.stringify(cut));
      assert.match(cut.note, /ansight_read_result/);
      assert.ok(cut.path && cut.resultId);
      // The whole answer, text and structured content together, stays small.
      assert.ok(JSON.stringify(res).length < 2 * 65536, `${JSON.stringify(res).length} bytes`);
      const page = await call(client, 'ansight_read_result', { resultId: cut.resultId, pointer: '/items', maxBytes: 4096 });
      const p = page.structuredContent;
      assert.ok(p.items.length > 0 && p.total > p.items.length && p.nextOffset === p.items.length, page.content[0].text.slice(0, 300));
      const next = await call(client, 'ansight_read_result', { resultId: cut.resultId, pointer: '/items', offset: p.nextOffset, maxBytes: 4096 });
      assert.equal(next.structuredContent.items[0].index, p.nextOffset);
    });

    await t.test('reports transfer progress for a progressToken', async () => {
      const size = 16_000_000;
      const seen = [];
      const res = await client.callTool(
        { name: 'ansight_call_app_tool', arguments: { toolId: 'files.generate', arguments: { sizeBytes: size, pattern: 'random' } } },
        CallToolResultSchema,
        { onprogress: (p) => seen.push(p) },
      );
      assert.notEqual(res.isError, true, res.content[0].text);
      // The bridge's last notification reports the whole file, but this client hands
      // notifications to the callback a microtask after it reads them and forgets the
      // callback when the response comes: one sent just before the response can be dropped
      // here (TestProgressFinal checks the last one in Go).
      assert.ok(seen.length >= 1, 'no notifications/progress');
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, 'progress increases');
      for (const p of seen) {
        assert.equal(p.total, size);
        assert.ok(p.progress > 0 && p.progress <= size);
        assert.match(p.message, /generated-16000000\.bin/);
      }
    });

    await t.test('snapshots the screen and acts on a ref', async () => {
      const snap = await client.callTool({ name: 'ansight_snapshot', arguments: {} });
      assert.notEqual(snap.isError, true, snap.content[0].text);
      const text = snap.content[0].text;
      const raw = await call(client, 'ansight_call_app_tool', { toolId: 'ui.get_visual_tree' });
      // The compact snapshot against the raw tree, both as the agent receives them.
      console.log(`      snapshot ${text.length} bytes; raw ui.get_visual_tree result ${JSON.stringify(raw.structuredContent.result).length} bytes`);
      assert.ok(text.length * 3 < JSON.stringify(raw.structuredContent.result).length, 'the snapshot is compact');
      // The raw capture superseded the snapshot: take a fresh one, then act on its ref.
      const fresh = (await client.callTool({ name: 'ansight_snapshot', arguments: {} })).content[0].text;
      const line = fresh.split('\n').find((l) => l.includes('switch "Dark mode"'));
      assert.ok(line, fresh);
      const ref = line.match(/\[ref=(e\d+)\]/)[1];
      const on = line.includes('[checked]');
      const acted = await call(client, 'ansight_call_app_tool', {
        toolId: 'ui.perform_action',
        arguments: { reference: ref, action: 'toggle' },
        snapshot: true,
      });
      assert.equal(acted.structuredContent.success, true, acted.content[0].text);
      const after = acted.structuredContent.snapshot.split('\n').find((l) => l.includes('switch "Dark mode"'));
      assert.ok(after.includes(`[ref=${ref}]`), 'the same node keeps its ref');
      assert.equal(after.includes('[checked]'), !on, after);
      const bad = toolError(await call(client, 'ansight_call_app_tool', { toolId: 'ui.perform_action', arguments: { reference: 'e9999', action: 'tap' } }));
      assert.equal(bad.code, 'unknown_ref');
      assert.match(bad.hint, /ansight_snapshot/);
    });

    await t.test('sends no response to a cancelled call', async () => {
      const abort = new AbortController();
      // ui.wait polls for a node that never appears: it runs until cancelled. The protocol
      // cannot tell the app that the host gave up, so the app keeps polling (capturing the
      // screen, which supersedes snapshot refs) until its own timeout: this test comes
      // after the UI tests.
      const pending = client.callTool(
        { name: 'ansight_call_app_tool', arguments: { toolId: 'ui.wait', arguments: { automationId: 'never', condition: 'exists', timeoutMilliseconds: 30000 } } },
        CallToolResultSchema,
        { signal: abort.signal },
      );
      await new Promise((r) => setTimeout(r, 300));
      abort.abort('the user pressed stop');
      await assert.rejects(pending);
      // Wait until the bridge has dealt with the cancelled call: it logs that it sent no
      // response. A response would have reached the client first (stdio keeps order) as a
      // "response for an unknown message ID".
      for (let i = 0; i < 100 && !/no response sent/.test(stderr()); i++) await new Promise((r) => setTimeout(r, 50));
      const state = await call(client, 'ansight_call_app_tool', { toolId: 'app.get_state' });
      assert.equal(state.structuredContent.success, true, 'the session goes on');
      assert.deepEqual(clientErrors.filter((e) => /unknown message ID/i.test(e)), [], 'a response came after the cancellation');
      assert.match(stderr(), /the client cancelled the request: no response sent/);
    });

    await t.test('reports an unknown tool', async () => {
      const err = toolError(await call(client, 'ansight_call_app_tool', { toolId: 'notes.nope' }));
      assert.equal(err.code, 'tool_not_found');
      assert.match(err.hint, /ansight_search_app_tools/);
    });
  } finally {
    await client.close();
  }
});

test('ansight mcp --demo --expose-app-tools: one MCP tool per app tool, list_changed', { timeout: 120_000 }, async (t) => {
  let changes = 0;
  let notify;
  const { client } = await connect(['--demo', '--expose-app-tools', 'com.ansight.demo.notes'], () => {
    changes++;
    notify?.();
  });
  // waitFor re-lists the tools after every list_changed notification until ok(names).
  async function waitFor(ok) {
    for (;;) {
      const seen = changes;
      const names = (await client.listTools()).tools.map((x) => x.name);
      if (ok(names)) return names;
      if (changes === seen) await new Promise((r) => { notify = r; });
    }
  }
  try {
    const names = await waitFor((n) => n.includes('notes_list'));
    assert.ok(names.includes('ansight_search_app_tools'));
    assert.ok(!names.includes('notes_delete_all'), 'a critical tool above the grant is exposed');
    assert.ok(!names.includes('sync_push'), 'an unavailable tool is exposed');

    const { tools } = await client.listTools();
    // Every name passes the strictest client check; the app's id travels in _meta.
    for (const tool of tools) {
      checkName(tool.name);
      if (!tool.name.startsWith('ansight_')) {
        assert.equal(tool._meta['ansight/toolId'].replaceAll('.', '_'), tool.name);
        assert.ok(tool.description.includes(tool._meta['ansight/toolId']));
      }
    }
    const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
    const list = byName.notes_list;
    assert.equal(list.annotations.readOnlyHint, true);
    assert.equal(list.annotations.idempotentHint, true);
    assert.ok(list.inputSchema.properties.limit);
    // Write tools are destructive unless the app marks them additive (notes.create does).
    assert.equal(byName.notes_create.annotations.readOnlyHint, false);
    assert.equal(byName.notes_create.annotations.destructiveHint, false);
    assert.equal(byName.notes_update.annotations.destructiveHint, true);
    assert.equal(byName.notes_update.annotations.idempotentHint, true);
    assert.equal(byName.account_sign_out.annotations.destructiveHint, true);
    assert.equal(byName.settings_set_dark_mode.annotations.idempotentHint, true);

    const res = await client.callTool({ name: 'notes_list', arguments: { limit: 2 } });
    assert.notEqual(res.isError, true, res.content[0].text);
    assert.ok(Array.isArray(res.structuredContent.notes));

    const bad = await client.callTool({ name: 'notes_create', arguments: { nope: 1 } });
    assert.equal(bad.isError, true);
    assert.match(JSON.parse(plain(bad.content[0])).error.code, /arguments/);

    // An exposed screenshot tool answers image content.
    const shot = await client.callTool({ name: 'ui_get_screenshot', arguments: {} });
    assert.notEqual(shot.isError, true, shot.content[0].text);
    assert.ok(shot.content.some((c) => c.type === 'image'), 'image content');

    // Signing in makes the sync tools available: the bridge announces it.
    const signIn = await client.callTool({ name: 'account_sign_in', arguments: { userName: 'e2e' } });
    assert.notEqual(signIn.isError, true, signIn.content[0].text);
    await waitFor((n) => n.includes('sync_push') && n.includes('sync_status'));
    assert.ok(changes > 0, 'no notifications/tools/list_changed');
  } finally {
    await client.close();
  }
});

// startHTTP spawns `ansight mcp --demo --http 127.0.0.1:0 <args>` and reads the endpoint
// and the token it prints.
async function startHTTP(args = []) {
  const stateDir = mkdtempSync(join(work, 'state-'));
  const child = spawn(bin, ['mcp', '--demo', '--http', '127.0.0.1:0', ...args], {
    env: { ...process.env, ANSIGHT_STATE_DIR: stateDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const ready = new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const endpoint = stderr.match(/serving MCP at (http:\S+)/)?.[1];
      const token = stderr.match(/Authorization: Bearer (\S+)/)?.[1];
      if (endpoint && token) resolve({ endpoint, token });
    });
    child.on('exit', (code) => reject(new Error(`ansight mcp --http exited ${code}: ${stderr}`)));
  });
  return { child, ...(await ready) };
}

test('ansight mcp --http: bearer token and origin allow-list', { timeout: 60_000 }, async () => {
  const { child, endpoint, token } = await startHTTP();
  try {
    // Without the token: refused (401), the client cannot connect.
    const anonymous = new Client({ name: 'ansight-e2e', version: '1.0.0' });
    await assert.rejects(anonymous.connect(new StreamableHTTPClientTransport(new URL(endpoint))), /401|nauthorized/);

    // With it: every meta-tool works as over stdio.
    const client = new Client({ name: 'ansight-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }));
    try {
      const res = await call(client, 'ansight_list_sessions');
      assert.equal(res.structuredContent.sessions[0].appId, 'com.ansight.demo.notes');
    } finally {
      await client.close();
    }

    // A web page on another localhost port is refused, token or not.
    const page = await fetch(endpoint, {
      method: 'POST',
      headers: { Origin: 'http://localhost:3000', Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(page.status, 403);
  } finally {
    child.kill();
  }
});

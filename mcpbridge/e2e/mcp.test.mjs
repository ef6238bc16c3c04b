// End-to-end test of `ansight mcp --demo` with the official TypeScript MCP SDK: an MCP
// client spawns the real binary over stdio (a real host and the demo app run inside it)
// and uses every meta-tool the way an agent does.
//
// Run with `npm test` (node --test). The binary is $ANSIGHT_BIN, or built from this
// repository into a temporary directory.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'ansight-mcp-e2e-'));
let bin = process.env.ANSIGHT_BIN;

const META_TOOLS = [
  'ansight_call_app_tool',
  'ansight_call_app_tools',
  'ansight_describe_app_tool',
  'ansight_list_sessions',
  'ansight_search_app_tools',
  'ansight_take_screenshot',
];

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
  return { client, stderr: () => stderr };
}

// call calls a tool; the SDK validates structuredContent against the tool's outputSchema.
async function call(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(Array.isArray(res.content) && res.content.length > 0, `${name}: no content`);
  assert.equal(res.content[0].type, 'text');
  // The text is the structured content's JSON, for clients that read text only.
  if (res.structuredContent) {
    assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
  }
  return res;
}

// toolError checks a tool error result and returns its error object.
function toolError(res) {
  assert.equal(res.isError, true, `want isError, got ${res.content[0].text}`);
  const err = JSON.parse(res.content[0].text).error;
  assert.equal(typeof err.code, 'string');
  assert.equal(typeof err.message, 'string');
  assert.equal(typeof err.retryable, 'boolean');
  assert.ok(err.hint, `error without a hint: ${JSON.stringify(err)}`);
  return err;
}

test('ansight mcp --demo with the TypeScript SDK', { timeout: 120_000 }, async (t) => {
  const { client } = await connect(['--demo']);
  try {
    await t.test('lists the six meta-tools, with schemas', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), META_TOOLS);
      for (const tool of tools) {
        assert.ok(tool.description, tool.name);
        assert.equal(tool.inputSchema.type, 'object', tool.name);
        assert.equal(tool.outputSchema?.type, 'object', tool.name);
      }
      const search = tools.find((x) => x.name === 'ansight_search_app_tools');
      assert.equal(search.annotations.readOnlyHint, true);
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
      assert.ok(out.tools.some((x) => x.id === 'notes.list'));
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

    await t.test('refuses a critical tool, saying why', async () => {
      const res = await call(client, 'ansight_call_app_tool', { toolId: 'notes.delete_all' });
      const err = toolError(res);
      // Apps on this machine are granted write: critical tools are above the grant.
      assert.equal(err.code, 'tool_policy_not_granted');
      assert.equal(err.kind, 'denied');
      assert.equal(err.refusedBy, 'bridge');
      assert.match(err.hint, /max-tool-policy critical/);
    });

    await t.test('reports an unavailable tool with what would make it available', async () => {
      const res = await call(client, 'ansight_call_app_tool', { toolId: 'sync.push' });
      const err = toolError(res);
      assert.equal(err.kind, 'unavailable');
      assert.equal(err.retryable, true);
      const desc = await call(client, 'ansight_describe_app_tool', { toolId: 'sync.push' });
      assert.match(desc.structuredContent.tool.runtime.remediation, /account\.sign_in/);
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
    const names = await waitFor((n) => n.includes('notes.list'));
    assert.ok(names.includes('ansight_search_app_tools'));
    assert.ok(!names.includes('notes.delete_all'), 'a critical tool above the grant is exposed');
    assert.ok(!names.includes('sync.push'), 'an unavailable tool is exposed');

    const { tools } = await client.listTools();
    const list = tools.find((x) => x.name === 'notes.list');
    assert.equal(list.annotations.readOnlyHint, true);
    assert.ok(list.inputSchema.properties.limit);
    const create = tools.find((x) => x.name === 'notes.create');
    assert.equal(create.annotations.readOnlyHint, false);
    assert.equal(create.annotations.destructiveHint, false);

    const res = await client.callTool({ name: 'notes.list', arguments: { limit: 2 } });
    assert.notEqual(res.isError, true, res.content[0].text);
    assert.ok(Array.isArray(res.structuredContent.notes));

    const bad = await client.callTool({ name: 'notes.create', arguments: { nope: 1 } });
    assert.equal(bad.isError, true);
    assert.match(JSON.parse(bad.content[0].text).error.code, /arguments/);

    // Signing in makes the sync tools available: the bridge announces it.
    const signIn = await client.callTool({ name: 'account.sign_in', arguments: { userName: 'e2e' } });
    assert.notEqual(signIn.isError, true, signIn.content[0].text);
    await waitFor((n) => n.includes('sync.push') && n.includes('sync.status'));
    assert.ok(changes > 0, 'no notifications/tools/list_changed');
  } finally {
    await client.close();
  }
});

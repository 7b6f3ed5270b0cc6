// MCP Tasks in revision 2026-07-28: the extension
// io.modelcontextprotocol/tasks (SEP-2663) driven by the official SDK v2
// client with @modelcontextprotocol/ext-tasks, over HTTP and over stdio.
// A client that names the extension gets a task for every run tool call (a
// background job of the same id), polls it with tasks/get to its inlined
// result, and cancels it with tasks/cancel; without the extension the task
// methods are -32021; over HTTP the Mcp-Name header must carry the task id,
// and another token's client does not find the task.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

import { BIN, MODERN, startServer, tokenFile, bearer, textOf, uniqueMarker, markedSleep, processesWith, waitFor,
  modern } from './helpers.js';

const EXT = 'io.modelcontextprotocol/tasks';
const FRAMING = { protocolVersion: MODERN, clientInfo: { name: 'sagebox-tasks-v2', version: '1' }, clientCapabilities: {} };
const ALICE = 'token-alice-1234567890';
const BOB = 'token-bob-1234567890';

// rawDispatch over HTTP: one POST with the 2026-07-28 headers (Mcp-Name
// carries a tool call's name or a task method's task id).
function httpDispatch(url, token) {
  let n = 0;
  return async (request) => {
    const msg = { jsonrpc: '2.0', id: `raw-${++n}`, ...request };
    const name = msg.params?.name ?? msg.params?.taskId;
    const headers = {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': msg.method, Authorization: `Bearer ${token}`,
      ...(name ? { 'Mcp-Name': name } : {}),
    };
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(msg) });
    const text = await res.text();
    const msgs = (res.headers.get('content-type') || '').includes('event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
      : [JSON.parse(text)];
    const answer = msgs.find((m) => m.id === msg.id);
    return answer.error ? { kind: 'error', error: answer.error } : { kind: 'result', result: answer.result };
  };
}

// rawDispatch over stdio: the request goes out on the client's transport, and
// its answer is taken from the stream before the SDK sees it.
function stdioDispatch(transport) {
  const pending = new Map();
  const sdk = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m && pending.has(m.id) && !m.method) {
      const resolve = pending.get(m.id);
      pending.delete(m.id);
      resolve(m.error ? { kind: 'error', error: m.error } : { kind: 'result', result: m.result });
    } else {
      sdk?.(m, extra);
    }
  };
  let n = 0;
  return (request) => new Promise((resolve, reject) => {
    const msg = { jsonrpc: '2.0', id: `raw-${++n}`, ...request };
    pending.set(msg.id, resolve);
    transport.send(msg).catch(reject);
  });
}

const combos = [
  {
    name: 'SDK v2 + ext-tasks over HTTP (2026-07-28)',
    async connect(s) {
      const client = new ClientV2(FRAMING.clientInfo, { versionNegotiation: { mode: { pin: MODERN } } });
      await client.connect(new HttpV2(new URL(s.url), bearer(ALICE)));
      return { client, raw: httpDispatch(s.url, ALICE) };
    },
  },
  {
    name: 'SDK v2 + ext-tasks over stdio (2026-07-28)',
    stdio: true,
    async connect() {
      const client = new ClientV2(FRAMING.clientInfo, { versionNegotiation: { mode: { pin: MODERN } } });
      const transport = new StdioV2({ command: BIN, args: ['mcp'], env: process.env, stderr: 'ignore' });
      await client.connect(transport);
      return { client, raw: stdioDispatch(transport) };
    },
  },
];

for (const combo of combos) {
  describe(combo.name, { timeout: 600000 }, () => {
    let s, c, session;
    before(async () => {
      if (!combo.stdio) s = await startServer({ args: ['--token-file', tokenFile({ alice: ALICE, bob: BOB })] });
      c = await combo.connect(s);
      session = createTaskSessionFromClient(c.client, { endpointId: 'sagebox-test', rawDispatch: c.raw, v2RequestFraming: FRAMING });
    });
    after(async () => {
      await session?.close();
      await c?.client.close();
      if (s) await s.stop();
    });

    test('server/discover names the extension', () => {
      assert.deepEqual(c.client.getServerCapabilities().extensions, { [EXT]: {} });
    });

    test('a Sage job longer than the request timeout is a task polled to its result', async () => {
      const code = 'import time\ntime.sleep(5)\nprint(factor(2^64 + 1))';
      const started = Date.now();
      const execution = await session.callTool('run_sagemath', { code }, { requestTimeoutMs: 3000 });
      assert.equal(execution.kind, 'task');
      const taskId = execution.handle.taskId ?? execution.handle.id;
      const events = [];
      const { outcome } = await execution.settle({ onEvent: (e) => events.push(e) });
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
      assert.ok(Date.now() - started > 5000);
      assert.match(textOf(outcome.result), /^274177 \* 67280421310721\n/);
      assert.equal(outcome.result.isError, false);
      assert.ok(events.some((e) => e.type === 'task' && e.task.status === 'working'), JSON.stringify(events));
      // The task is the background job of the same id.
      const st = await c.client.callTool({ name: 'job_status', arguments: { job_id: String(taskId) } });
      assert.equal(st.structuredContent.state, 'done', textOf(st));
    });

    test('a failing job completes with an isError result (failed is for protocol errors)', async () => {
      const execution = await session.callTool('run_shell', { code: 'echo oops >&2; exit 3' });
      assert.equal(execution.kind, 'task');
      const { outcome } = await execution.settle();
      assert.equal(outcome.status, 'completed');
      assert.equal(outcome.result.isError, true);
      assert.match(textOf(outcome.result), /oops\n[\s\S]*exit status 3/);
    });

    test('tasks/cancel stops the job: its processes are gone', async () => {
      const marker = uniqueMarker('ext-cancel');
      const execution = await session.callTool('run_shell', { code: markedSleep(marker) });
      assert.equal(execution.kind, 'task');
      const taskId = String(execution.handle.taskId ?? execution.handle.id);
      assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job runs');
      await execution.cancel();
      assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), 'its processes were killed');
      const got = await c.raw({ method: 'tasks/get', params: { taskId, _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } } } } });
      assert.equal(got.result.status, 'cancelled', JSON.stringify(got));
      assert.equal(got.result.resultType, 'complete');
    });

    test('without the extension: a plain result, and the task methods are -32021', async () => {
      const r = await c.client.callTool({ name: 'run_shell', arguments: { code: 'echo plain' } });
      assert.equal(textOf(r).split('\n')[0], 'plain');
      const execution = await session.callTool('run_shell', { code: 'echo x' });
      const taskId = String(execution.handle.taskId ?? execution.handle.id);
      await execution.settle();
      const got = await c.raw({ method: 'tasks/get', params: { taskId, _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } } });
      assert.equal(got.kind, 'error');
      assert.equal(got.error.code, -32021);
      assert.deepEqual(got.error.data, { requiredCapabilities: { extensions: { [EXT]: {} } } });
    });

    if (!combo.stdio) {
      test("another client does not find the task; Mcp-Name must be the task id", async () => {
        const execution = await session.callTool('run_shell', { code: 'echo mine' });
        const taskId = String(execution.handle.taskId ?? execution.handle.id);
        await execution.settle();
        const caps = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } } };
        let a = await modern(s.url, BOB, 'tasks/get', { taskId, _meta: caps }, { headers: { 'Mcp-Name': taskId } });
        assert.equal(a.answer.error.code, -32602);
        assert.match(a.answer.error.message, /Task not found/);
        a = await modern(s.url, ALICE, 'tasks/get', { taskId, _meta: caps }, { headers: { 'Mcp-Name': 'j_other' } });
        assert.equal(a.status, 400);
        assert.match(a.text, /Mcp-Name header value does not match the body's taskId/);
        a = await modern(s.url, ALICE, 'tasks/get', { taskId, _meta: caps }, { headers: { 'Mcp-Name': taskId } });
        assert.equal(a.answer.result.status, 'completed');
        assert.match(textOf(a.answer.result.result), /^mine\n/);
      });
    }
  });
}

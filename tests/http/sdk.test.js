// The official SDK clients drive every tool of `sagebox mcp`: v1
// (@modelcontextprotocol/sdk) over HTTP in the handshake era (a session,
// revision 2025-11-25), and v2 (@modelcontextprotocol/client, pinned to
// revision 2026-07-28: server/discover, _meta on every request) over HTTP
// and over stdio. Each also gets progress (a 4 s request timeout survives a
// 5 s job because progress resets it) and cancellation (the job's processes
// are gone, and the server serves the next call). v1 over stdio is
// tests/mcp/sdk.test.js.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, MODERN, TOOL_NAMES, startServer, textOf, uniqueMarker, markedSleep, processesWith, waitFor, modern, bearer }
  from './helpers.js';

const combos = [
  {
    name: 'SDK v1 over HTTP (handshake era, session)',
    revision: '2025-11-25',
    async connect(s) {
      const client = new ClientV1({ name: 'sagebox-http-v1', version: '1' });
      const transport = new HttpV1(new URL(s.url), bearer(s.token));
      await client.connect(transport);
      assert.ok(transport.sessionId, 'the server gave a session id');
      return { client, call: (p, o) => client.callTool(p, undefined, o) };
    },
  },
  {
    name: 'SDK v2 over HTTP (2026-07-28)',
    revision: MODERN,
    async connect(s) {
      const client = new ClientV2({ name: 'sagebox-http-v2', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
      await client.connect(new HttpV2(new URL(s.url), bearer(s.token)));
      return { client, call: (p, o) => client.callTool(p, o) };
    },
  },
  {
    name: 'SDK v2 over stdio (2026-07-28)',
    revision: MODERN,
    stdio: true,
    async connect() {
      const client = new ClientV2({ name: 'sagebox-stdio-v2', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
      await client.connect(new StdioV2({ command: BIN, args: ['mcp'], env: process.env, stderr: 'ignore' }));
      return { client, call: (p, o) => client.callTool(p, o) };
    },
  },
];

for (const combo of combos) {
  describe(combo.name, { timeout: 600000 }, () => {
    let s, c;
    before(async () => {
      if (!combo.stdio) s = await startServer();
      c = await combo.connect(s);
    });
    after(async () => {
      await c?.client.close();
      if (s) await s.stop();
    });

    test('lists every tool, with titles and output schemas', async () => {
      const { tools } = await c.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
      for (const t of tools) assert.ok(t.title && t.outputSchema && t.inputSchema, t.name);
    });

    test('runs every tool', async () => {
      let r = await c.call({ name: 'run_sagemath', arguments: { code: 'R.<x> = QQ[]\nfactor(x^4 - 1)' } }, { timeout: 240000 });
      assert.equal(r.isError, false, textOf(r));
      assert.match(textOf(r), /^\(x - 1\) \* \(x \+ 1\) \* \(x\^2 \+ 1\)\n/);
      r = await c.call({ name: 'run_python', arguments: { code: 'print(sum(range(10)))' } });
      assert.match(textOf(r), /^45\n/);
      assert.equal(r.structuredContent.exit_code, 0);
      r = await c.call({ name: 'run_shell', arguments: { code: 'echo hi; exit 3' } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.exit_code, 3);
      r = await c.call({ name: 'sandbox_status', arguments: {} });
      assert.equal(r.structuredContent.mcp.protocol_version, combo.revision);
      r = await c.call({ name: 'sandbox_self_test', arguments: {} }, { timeout: 300000 });
      assert.match(textOf(r), /^sagebox self-test: (passed|FAILED)/);
      // Arguments that break the schema: a tool error the model can act on.
      r = await c.call({ name: 'run_python', arguments: { code: 'print(1)', timeout_seconds: 9999 } });
      assert.ok(r.isError && /timeout_seconds/.test(textOf(r)));
    });

    test('runs every session, file and job tool', async () => {
      const ok = async (name, args, opts) => {
        const r = await c.call({ name, arguments: args }, { timeout: 120000, ...opts });
        assert.equal(r.isError, false, `${name}: ${textOf(r)}`);
        return r.structuredContent;
      };
      const sid = (await ok('session_open', { lang: 'python' })).session_id;
      assert.match(sid, /^s_[a-z0-9-]{1,32}_[0-9a-f]{32}$/);
      await ok('run_python', { code: 'x = 41', session_id: sid });
      assert.match(textOf(await c.call({ name: 'run_python', arguments: { code: 'print(x + 1)', session_id: sid } })), /^42\n/);
      await ok('file_write', { session_id: sid, path: 'notes.txt', content: 'over http\n' });
      assert.match(textOf(await c.call({ name: 'file_read', arguments: { session_id: sid, path: 'notes.txt' } })), /over http/);
      assert.ok((await ok('file_list', { session_id: sid })).entries.some((e) => e.name === 'notes.txt'));
      // No export_dir is set: file_export says so, as a tool error.
      const ex = await c.call({ name: 'file_export', arguments: { session_id: sid, path: 'notes.txt' } });
      assert.equal(ex.isError, true, textOf(ex));
      const job = (await ok('job_start', { lang: 'python', code: 'print(x * 2)', session_id: sid })).job_id;
      assert.ok(await waitFor(async () => (await ok('job_status', { job_id: job })).state === 'done', 60000), 'the job ended');
      assert.match((await ok('job_output', { job_id: job })).output, /^82\n/);
      const marker = uniqueMarker('sdkjob');
      const long = (await ok('job_start', { lang: 'shell', code: markedSleep(marker) })).job_id;
      assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the long job started');
      await ok('job_cancel', { job_id: long });
      assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), JSON.stringify(processesWith(marker)));
      assert.deepEqual((await ok('session_list', {})).sessions.map((s) => s.session_id), [sid]);
      await ok('session_reset', { session_id: sid });
      assert.equal((await c.call({ name: 'run_python', arguments: { code: 'print(x)', session_id: sid } })).isError, true);
      await ok('session_close', { session_id: sid });
      assert.deepEqual((await ok('session_list', {})).sessions, []);
    });

    test('progress keeps a 4 s request timeout alive through a 5 s job', async () => {
      const seen = [];
      const r = await c.call(
        { name: 'run_python', arguments: { code: 'import time\nfor i in range(5):\n    print(i, flush=True); time.sleep(1)' } },
        { timeout: 4000, resetTimeoutOnProgress: true, onprogress: (p) => seen.push(p) },
      );
      assert.match(textOf(r), /^0\n1\n2\n3\n4\n/);
      assert.ok(seen.length >= 1, 'progress arrived');
      assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress));
    });

    test('cancellation kills the job, and the next call is served', async () => {
      const marker = uniqueMarker('sdk');
      const ac = new AbortController();
      const call = c.call({ name: 'run_shell', arguments: { code: markedSleep(marker) } }, { signal: ac.signal, timeout: 120000 });
      call.catch(() => {});
      assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job started');
      ac.abort('test cancels');
      await assert.rejects(call);
      assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), JSON.stringify(processesWith(marker)));
      const r = await c.call({ name: 'run_shell', arguments: { code: 'echo after' } });
      assert.match(textOf(r), /^after\n/);
    });
  });
}

describe('log messages over HTTP', { timeout: 120000 }, () => {
  test('handshake era: at the level set with logging/setLevel, on the call\'s stream', async () => {
    const s = await startServer();
    const client = new ClientV1({ name: 'sagebox-http-v1', version: '1' });
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    try {
      await client.connect(new HttpV1(new URL(s.url), bearer(s.token)));
      await client.setLoggingLevel('info');
      await client.callTool({ name: 'run_shell', arguments: { code: 'echo x' } });
      assert.ok(logs.some((l) => l.level === 'info' && /run_shell: exit status 0/.test(l.data)), JSON.stringify(logs));
      await client.setLoggingLevel('error');
      const before = logs.length;
      await client.callTool({ name: 'run_shell', arguments: { code: 'echo x' } });
      assert.equal(logs.length, before);
    } finally {
      await client.close();
      await s.stop();
    }
  });

  test('2026-07-28: only for a request whose _meta asks, before its response', async () => {
    const s = await startServer();
    try {
      const quiet = await modern(s.url, s.token, 'tools/call', { name: 'run_shell', arguments: { code: 'echo x' } });
      assert.ok(quiet.answer && !quiet.messages.some((m) => m.method === 'notifications/message'), quiet.text);
      const loud = await modern(s.url, s.token, 'tools/call', { name: 'run_shell', arguments: { code: 'echo x' },
        _meta: { 'io.modelcontextprotocol/logLevel': 'debug' } });
      const i = loud.messages.findIndex((m) => m.method === 'notifications/message');
      assert.ok(i >= 0 && i < loud.messages.indexOf(loud.answer), loud.text);
      const bad = await modern(s.url, s.token, 'tools/list', { _meta: { 'io.modelcontextprotocol/logLevel': 'loud' } });
      assert.equal(bad.status, 400);
      assert.equal(bad.answer.error.code, -32602);
    } finally {
      await s.stop();
    }
  });
});

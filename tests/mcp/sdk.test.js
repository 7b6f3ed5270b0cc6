// The official TypeScript SDK as the client, over stdio, against the real
// binary with real Sage in the sandbox.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { McpError, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  sdkClient, closeClient, textOf, LATEST, uniqueMarker, markedSleep, waitPresent, waitGone, sleep, RawServer,
} from './helpers.js';

const SAGE_TIMEOUT = 120000;

describe('SDK client', () => {
  let c;
  before(async () => {
    c = await sdkClient();
  });
  after(async () => {
    if (c) await closeClient(c);
  });

  test('initialize negotiates the SDK\'s newest revision', () => {
    assert.equal(c.client.getServerVersion().name, 'sagebox');
    assert.ok(c.client.getServerVersion().title);
    assert.ok(c.client.getServerCapabilities().tools);
    assert.ok(c.client.getServerCapabilities().logging);
    assert.match(c.client.getInstructions(), /R\.<x> = QQ\[\]/);
  });

  test('tools/list: titles, descriptions, schemas, annotations', async () => {
    const { tools } = await c.client.listTools();
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ['run_sagemath', 'run_python', 'run_shell']) {
      const t = by[name];
      assert.ok(t.title);
      for (const re of [/no network/i, /user's files/, /50000/, /timeout_seconds/, /starts fresh/]) {
        assert.match(t.description, re, `${name}: ${re}`);
      }
      if (name !== 'run_shell') {
        assert.match(t.description, /print\(/);
        assert.match(t.description, /last line/);
      }
      assert.deepEqual(t.inputSchema.required, ['code']);
      assert.equal(t.inputSchema.additionalProperties, false);
      assert.equal(t.inputSchema.properties.code.type, 'string');
      assert.equal(t.inputSchema.properties.code.maxLength, 50000);
      assert.deepEqual(
        [t.inputSchema.properties.timeout_seconds.type, t.inputSchema.properties.timeout_seconds.minimum, t.inputSchema.properties.timeout_seconds.maximum],
        ['integer', 1, 600]);
      assert.deepEqual(t.annotations, {
        title: t.title, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false,
      });
      assert.equal(t.outputSchema.type, 'object');
      for (const k of ['ok', 'exit_code', 'signal', 'timed_out', 'output_limit_exceeded', 'stdout', 'stderr', 'truncated', 'duration_ms', 'sandbox']) {
        assert.ok(k in t.outputSchema.properties, `${name} outputSchema lacks ${k}`);
      }
    }
    assert.match(by.run_sagemath.description, /R\.<x> = QQ\[\]/);
    assert.equal(by.sandbox_status.annotations.readOnlyHint, true);
    assert.match(by.sandbox_status.description, /without running any code/);
    assert.equal(by.sandbox_self_test.annotations.readOnlyHint, true);
    for (const name of ['sandbox_status', 'sandbox_self_test']) {
      assert.deepEqual(by[name].inputSchema.properties, {});
      assert.equal(by[name].inputSchema.additionalProperties, false);
    }
  });

  test('run_sagemath with real Sage: factor(x^4 - 1)', { timeout: SAGE_TIMEOUT }, async () => {
    const r = await c.client.callTool({ name: 'run_sagemath', arguments: { code: 'R.<x> = QQ[]; print(factor(x^4-1))' } }, undefined, { timeout: SAGE_TIMEOUT });
    assert.equal(r.isError, false, textOf(r));
    assert.equal(r.structuredContent.stdout.trim(), '(x - 1) * (x + 1) * (x^2 + 1)');
    assert.equal(r.structuredContent.ok, true);
    assert.equal(r.structuredContent.exit_code, 0);
    assert.match(textOf(r), /^\(x - 1\) \* \(x \+ 1\) \* \(x\^2 \+ 1\)\n\n\[exit status 0\]$/);
  });

  test('run_sagemath shows the last expression', { timeout: SAGE_TIMEOUT }, async () => {
    const r = await c.client.callTool({ name: 'run_sagemath', arguments: { code: 'a = 2^100\na.factor()' } }, undefined, { timeout: SAGE_TIMEOUT });
    assert.equal(r.isError, false, textOf(r));
    assert.equal(r.structuredContent.stdout.trim(), '2^100');
  });

  test('run_sagemath: an error is isError with the traceback and what to do', { timeout: SAGE_TIMEOUT }, async () => {
    const r = await c.client.callTool({ name: 'run_sagemath', arguments: { code: 'print(1/0)' } }, undefined, { timeout: SAGE_TIMEOUT });
    assert.equal(r.isError, true);
    const t = textOf(r);
    assert.match(t, /stderr:\n/);
    assert.match(t, /ZeroDivisionError/);
    assert.match(t, /\[exit status 1\]/);
    assert.match(t, /fix the code/);
    assert.equal(r.structuredContent.exit_code, 1);
  });

  test('run_python prints and shows the last expression', async () => {
    const r = await c.client.callTool({ name: 'run_python', arguments: { code: 'import sys\nprint("out")\nprint("err", file=sys.stderr)\n6*7' } });
    assert.equal(r.isError, false, textOf(r));
    assert.equal(r.structuredContent.stdout, 'out\n42\n');
    assert.equal(r.structuredContent.stderr, 'err\n');
    assert.equal(textOf(r), 'out\n42\n\nstderr:\nerr\n\n[exit status 0]');
  });

  test('run_shell: stdout, stderr and exit status', async () => {
    const r = await c.client.callTool({ name: 'run_shell', arguments: { code: 'echo hello; echo oops >&2; exit 3' } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.exit_code, 3);
    assert.equal(textOf(r).split('\n')[0], 'hello');
    assert.match(textOf(r), /stderr:\noops\n\n\[exit status 3\]/);
  });

  test('no output says so', async () => {
    const r = await c.client.callTool({ name: 'run_python', arguments: { code: 'x = 1' } });
    assert.equal(r.isError, false);
    assert.match(textOf(r), /no output/);
  });

  test('timeout -> isError with the verdict', { timeout: 60000 }, async () => {
    const t0 = Date.now();
    const r = await c.client.callTool({ name: 'run_python', arguments: { code: 'print("start", flush=True)\nwhile True: pass', timeout_seconds: 2 } });
    assert.ok(Date.now() - t0 < 15000);
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.timed_out, true);
    assert.equal(r.structuredContent.ok, false);
    assert.match(textOf(r), /\[timed out after 2 s\]/);
    assert.match(textOf(r), /timeout_seconds/);
    assert.match(textOf(r), /^start\n/);
  });

  test('output over the limit is said plainly', { timeout: 60000 }, async () => {
    const r = await c.client.callTool({ name: 'run_python', arguments: { code: 'print("y" * 2_000_000)' } });
    assert.equal(r.structuredContent.truncated.stdout, true);
    assert.equal(r.structuredContent.truncated.stdout_total_bytes, 2000001);
    assert.equal(r.isError, !r.structuredContent.ok);
    assert.match(textOf(r), /\[stdout was cut: the code wrote 2000001 bytes, more than the \d+ KiB kept per stream; the middle is left out\]/);
    assert.ok(textOf(r).length < 2 * r.structuredContent.truncated.max_bytes_per_stream);
  });

  test('progress notifications every ~2 s during a 5 s job, with output so far', { timeout: 60000 }, async () => {
    const progress = [];
    const r = await c.client.callTool(
      { name: 'run_python', arguments: { code: 'import time\nprint("step one", flush=True)\ntime.sleep(5)\nprint("done")' } },
      undefined,
      { onprogress: (p) => progress.push({ ...p, at: Date.now() }), resetTimeoutOnProgress: true, timeout: 4000 },
    );
    // The 4 s request timeout only held because progress reset it.
    assert.equal(r.isError, false, textOf(r));
    assert.equal(r.structuredContent.stdout, 'step one\ndone\n');
    assert.ok(progress.length >= 2, JSON.stringify(progress));
    for (let i = 1; i < progress.length; i++) {
      assert.ok(progress[i].progress > progress[i - 1].progress);
      assert.ok(progress[i].at - progress[i - 1].at < 3000);
    }
    assert.ok(progress[0].progress >= 1 && progress[0].progress <= 3.5, JSON.stringify(progress[0]));
    assert.match(progress[0].message, /elapsed/);
    assert.ok(progress.some((p) => /step one/.test(p.message)), JSON.stringify(progress));
  });

  test('cancellation (AbortSignal) kills the sandbox and gets no response', { timeout: 60000 }, async () => {
    const marker = uniqueMarker('sdkcancel');
    const stray = [];
    const prev = c.client.onerror;
    c.client.onerror = (e) => stray.push(String(e));
    const ac = new AbortController();
    const p = c.client.callTool({ name: 'run_shell', arguments: { code: markedSleep(marker) } }, undefined, { signal: ac.signal });
    assert.ok(await waitPresent(marker), 'the job never started');
    const t0 = Date.now();
    ac.abort('test cancels');
    await assert.rejects(p);
    assert.deepEqual(await waitGone(marker), [], 'processes of the cancelled job survived');
    assert.ok(Date.now() - t0 < 5000);
    await sleep(1000);
    c.client.onerror = prev;
    assert.deepEqual(stray, [], 'the server answered a cancelled request');
    await c.client.ping();
  });

  test('cancelling a Sage job kills it too', { timeout: SAGE_TIMEOUT }, async () => {
    const marker = uniqueMarker('sagecancel');
    const ac = new AbortController();
    const p = c.client.callTool({ name: 'run_sagemath', arguments: { code: `import subprocess\nsubprocess.run(['sh', '-c', 'sleep 300; true', '${marker}'])` } }, undefined, { signal: ac.signal, timeout: SAGE_TIMEOUT });
    assert.ok(await waitPresent(marker, 60000), 'the job never started');
    ac.abort();
    await assert.rejects(p);
    assert.deepEqual(await waitGone(marker), []);
  });

  test('concurrent calls run at once, and ping is answered during them', { timeout: 60000 }, async () => {
    const t0 = Date.now();
    const calls = [1, 2, 3].map((i) => c.client.callTool({ name: 'run_shell', arguments: { code: `sleep 2; echo ${i}` } }));
    await sleep(300);
    const p0 = Date.now();
    await c.client.ping();
    assert.ok(Date.now() - p0 < 500, 'ping waited for a job');
    const results = await Promise.all(calls);
    assert.deepEqual(results.map((r) => r.structuredContent.stdout), ['1\n', '2\n', '3\n']);
    assert.ok(Date.now() - t0 < 5500, `three 2 s calls took ${Date.now() - t0} ms: they did not overlap`);
  });

  test('logging/setLevel and notifications/message', { timeout: 60000 }, async () => {
    const got = [];
    c.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => got.push(n.params));
    await c.client.setLoggingLevel('debug');
    await c.client.callTool({ name: 'run_shell', arguments: { code: 'true' } });
    await sleep(200);
    assert.ok(got.some((m) => m.level === 'debug'), JSON.stringify(got));
    assert.ok(got.some((m) => m.level === 'info' && /run_shell: exit status 0/.test(m.data)), JSON.stringify(got));
    got.length = 0;
    await c.client.setLoggingLevel('warning');
    await c.client.callTool({ name: 'run_shell', arguments: { code: 'true' } });
    await sleep(200);
    assert.deepEqual(got, []);
    await c.client.setLoggingLevel('info');
  });

  test('sandbox_status never runs code and reports the settings', async () => {
    const r = await c.client.callTool({ name: 'sandbox_status', arguments: {} });
    assert.equal(r.isError, false);
    const s = r.structuredContent;
    assert.equal(typeof s.settings, 'object');
    assert.equal(s.settings.timeout, 30);
    assert.ok('backend' in s);
    assert.equal(s.mcp.protocol_version, LATEST);
    // The text for the model is short and verdict first; the JSON is structuredContent.
    const t = textOf(r);
    assert.match(t, new RegExp(`^sagebox: the sandbox works here: native backend, ${s.isolation} isolation`));
    assert.match(t, /\nEnforced:\n(.*\n)*  syscalls +seccomp filter/);
    assert.match(t, new RegExp(`MCP protocol ${LATEST}`));
    assert.ok(!t.includes('would_enforce') && t.length < 4000, t);
  });

  test('sandbox_self_test', { timeout: SAGE_TIMEOUT }, async () => {
    const r = await c.client.callTool({ name: 'sandbox_self_test', arguments: {} }, undefined, { timeout: SAGE_TIMEOUT });
    assert.equal(typeof r.structuredContent.ok, 'boolean');
    assert.ok(Array.isArray(r.structuredContent.checks));
    assert.equal(r.isError, !r.structuredContent.ok);
    assert.match(textOf(r), /^sagebox self-test: (passed|FAILED) \(native backend\)/);
    if (r.structuredContent.ok) {
      assert.match(textOf(r), /^sagebox self-test: passed \(native backend\): Sage printed \(x - 1\) \* \(x \+ 1\) \* \(x\^2 \+ 1\), and \d+ checks/);
      assert.match(textOf(r), /\nPassed:\n  ok    sage factor/);
    }
  });

  test('protocol errors surface as McpError', async () => {
    await assert.rejects(c.client.callTool({ name: 'no_such_tool', arguments: {} }),
      (e) => e instanceof McpError && e.code === -32602 && /Unknown tool/.test(e.message));
    // From 2025-11-25 (the SDK's revision) arguments that break the schema
    // are a tool error the model can correct (SEP-1303), not a protocol error.
    let r = await c.client.callTool({ name: 'run_python', arguments: { code: 'print(1)', timeout_seconds: 9999 } });
    assert.ok(r.isError && /timeout_seconds/.test(textOf(r)), JSON.stringify(r));
    r = await c.client.callTool({ name: 'run_python', arguments: { code: 'x'.repeat(50001) } });
    assert.ok(r.isError && /50001/.test(textOf(r)), JSON.stringify(r));
    await assert.rejects(c.client.request({ method: 'prompts/list', params: {} }, (await import('@modelcontextprotocol/sdk/types.js')).ListPromptsResultSchema),
      (e) => e instanceof McpError && e.code === -32601);
  });
});

describe('settings and audit log', () => {
  test('setting flags and SAGEBOX_* reach the tools', async () => {
    const c = await sdkClient({ args: ['--timeout', '7', '--output-limit-kib', '64'], env: { SAGEBOX_MEMORY: '512m' } });
    try {
      const { tools } = await c.client.listTools();
      const run = tools.find((t) => t.name === 'run_python');
      assert.match(run.inputSchema.properties.timeout_seconds.description, /Default: 7/);
      assert.match(run.description, /512m/);
      const st = (await c.client.callTool({ name: 'sandbox_status', arguments: {} })).structuredContent;
      assert.equal(st.settings.timeout, 7);
      assert.equal(st.settings.memory, '512m');
      assert.equal(st.settings.output_limit_kib, 64);
      const r = await c.client.callTool({ name: 'run_shell', arguments: { code: 'echo hi' } });
      assert.equal(r.structuredContent.timeout_seconds, 7);
      assert.equal(r.structuredContent.truncated.max_bytes_per_stream, 64 * 1024);
    } finally {
      await closeClient(c);
    }
  });

  test('the audit log: a "started" and a "finished" line per call, linked by a call id', { timeout: SAGE_TIMEOUT }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sagebox-audit-'));
    const log = path.join(dir, 'audit.jsonl');
    const c = await sdkClient({ env: { SAGEBOX_AUDIT_LOG: log } });
    const code = 'print("audited ✓")';
    try {
      await c.client.callTool({ name: 'run_python', arguments: { code } });
      await c.client.callTool({ name: 'run_shell', arguments: { code: 'exit 4' } });
      await c.client.callTool({ name: 'sandbox_status', arguments: {} });
    } finally {
      await closeClient(c);
    }
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    rmSync(dir, { recursive: true });
    assert.equal(lines.length, 6);
    assert.deepEqual(lines.map((l) => l.event), ['started', 'finished', 'started', 'finished', 'started', 'finished']);
    const [as, a, bs, b, ss, s] = lines;
    for (const [start, end] of [[as, a], [bs, b], [ss, s]]) {
      assert.match(start.call, /^[0-9a-f]{16}$/);
      assert.equal(end.call, start.call);
      assert.equal(start.tool, end.tool);
      assert.equal(start.client, 'stdio');
      assert.equal(start.client_info, 'sagebox-tests 1.0.0');
      assert.ok(!('verdict' in start) && !('ok' in start));
    }
    assert.equal(new Set([as.call, bs.call, ss.call]).size, 3);
    assert.match(as.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(as.time <= a.time);
    assert.equal(as.tool, 'run_python');
    for (const l of [as, a]) {
      assert.equal(l.code_sha256, createHash('sha256').update(code, 'utf8').digest('hex'));
      assert.equal(l.code_bytes, Buffer.byteLength(code));
      assert.equal(l.code_chars, [...code].length);
    }
    assert.equal(typeof a.backend, 'string');
    assert.equal(a.verdict, 'exit status 0');
    assert.equal(a.ok, true);
    assert.equal(a.timeout_seconds, 30);
    assert.equal(typeof a.duration_ms, 'number');
    assert.equal(b.verdict, 'exit status 4');
    assert.equal(b.ok, false);
    assert.equal(bs.code_sha256, createHash('sha256').update('exit 4').digest('hex'));
    assert.equal(s.tool, 'sandbox_status');
    assert.ok(!('code_sha256' in ss) && !('code_sha256' in s));
  });

  // Code that ran must be on record even when the
  // server is killed before the call ends.
  test('the audit log keeps a call whose server was SIGKILLed mid-run', { timeout: 60000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sagebox-audit-'));
    const log = path.join(dir, 'audit.jsonl');
    const marker = uniqueMarker('auditkill');
    const code = markedSleep(marker, 60);
    const s = new RawServer({ env: { SAGEBOX_AUDIT_LOG: log } });
    try {
      await s.initialize();
      s.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'run_shell', arguments: { code } } });
      assert.ok(await waitPresent(marker), 'the job never started');
      s.kill();
      await s.exited;
      const lines = readFileSync(log, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
      assert.equal(lines.length, 1, JSON.stringify(lines));
      const [l] = lines;
      assert.equal(l.event, 'started');
      assert.equal(l.tool, 'run_shell');
      assert.equal(l.client, 'stdio');
      assert.match(l.call, /^[0-9a-f]{16}$/);
      assert.equal(l.code_sha256, createHash('sha256').update(code).digest('hex'));
      assert.equal(l.code_bytes, Buffer.byteLength(code));
    } finally {
      s.kill();
      rmSync(dir, { recursive: true });
    }
    // The sandbox dies with its server.
    assert.deepEqual(await waitGone(marker, 15000), []);
  });
});

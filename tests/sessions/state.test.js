// Sessions keep their state between calls (Sage ring, Python function,
// shell cwd and env); an interrupt keeps it; a runaway that ignores the
// interrupt restarts the interpreter and the result says so; unknown and
// closed ids get the promised errors; the tools, descriptions and
// instructions tell the model when to use sessions.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import {
  sdkClient, closeClient, call, ok, fails, open, run, out, LONG, sleep,
} from './helpers.js';

describe('session state', () => {
  let c;
  let dir;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sagebox-sessions-'));
    c = await sdkClient({ args: ['--audit-log', path.join(dir, 'audit.jsonl')] });
  });
  after(async () => {
    if (c) await closeClient(c);
    rmSync(dir, { recursive: true, force: true });
  });

  test('tools, descriptions and instructions speak of sessions', async () => {
    const { tools } = await c.client.listTools();
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const n of ['session_open', 'session_list', 'session_reset', 'session_close', 'file_write', 'file_read',
      'file_list', 'file_export', 'job_start', 'job_status', 'job_output', 'job_cancel']) {
      assert.ok(by[n], n);
      assert.equal(by[n].inputSchema.additionalProperties, false, n);
    }
    assert.deepEqual(by.session_open.inputSchema.properties.lang.enum, ['sage', 'python', 'shell']);
    assert.match(by.session_open.description, /30 minutes/);
    assert.match(by.session_open.description, /one-off question/);
    for (const n of ['run_sagemath', 'run_python', 'run_shell']) {
      assert.equal(by[n].inputSchema.properties.session_id.type, 'string');
      assert.deepEqual(by[n].inputSchema.required, ['code']);
    }
    assert.deepEqual(by.file_write.inputSchema.required, ['session_id', 'path']);
    assert.deepEqual(by.job_start.inputSchema.required, ['lang', 'code']);
    assert.equal(by.session_close.annotations.destructiveHint, true);
    const ins = c.client.getInstructions();
    assert.match(ins, /session_open/);
    assert.match(ins, /30 minutes/);
    assert.match(ins, /simplest way for a one-off question/);
  });

  test('a Sage ring defined in one call is there in the next; Python runs in the same interpreter', { timeout: LONG }, async () => {
    const sid = await open(c, 'sage');
    await ok(c, 'run_sagemath', { code: 'R.<x> = QQ[]', session_id: sid });
    assert.equal(await out(c, sid, 'sage', 'print(factor(x^4 - 1))'), '(x - 1) * (x + 1) * (x^2 + 1)\n');
    // the bare last expression is displayed as in stateless calls
    assert.equal(await out(c, sid, 'sage', 'f = x^2 - 2\nf.roots(RR)'), '[(-1.41421356237310, 1), (1.41421356237310, 1)]\n');
    // run_python in a Sage session: the same globals, no preparse
    assert.equal(await out(c, sid, 'python', 'print(type(f).__name__, 2^3)'), 'Polynomial_rational_flint 1\n');
    // a mismatch is a clear error
    await fails(c, 'run_shell', { code: 'ls', session_id: sid }, /sage session: it cannot run shell code/);
    await ok(c, 'session_close', { session_id: sid });
  });

  test('a Python function persists; a stateless call sees nothing of it', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: 'def twice(n):\n    return 2 * n\nstore = []', session_id: sid });
    await ok(c, 'run_python', { code: 'store.append(twice(21))', session_id: sid });
    assert.equal(await out(c, sid, 'python', 'print(store, twice(5))'), '[42] 10\n');
    const stateless = await call(c, 'run_python', { code: 'print(twice(1))' });
    assert.equal(stateless.r.isError, true);
    assert.match(stateless.s.stderr, /NameError/);
    // a traceback through a function of an earlier call shows its own lines
    const bad = await run(c, sid, 'python', 'twice(None, 1)');
    assert.match(bad.s.stderr, /<cell 4>/);
    await fails(c, 'run_sagemath', { code: '1', session_id: sid }, /python session: it cannot run sage code/);
    await ok(c, 'session_close', { session_id: sid });
  });

  test('a shell session keeps its cwd, exports, variables and functions', { timeout: LONG }, async () => {
    const sid = await open(c, 'shell');
    assert.equal(await out(c, sid, 'shell', 'pwd'), '/work\n');
    await ok(c, 'run_shell', { code: 'mkdir -p proj/src && cd proj/src && export TOKEN=abc && n=7 && hi() { echo "hi $1"; }', session_id: sid });
    assert.equal(await out(c, sid, 'shell', 'pwd; echo "$TOKEN $n"; hi there; sh -c \'echo $TOKEN\''), '/work/proj/src\nabc 7\nhi there\nabc\n');
    // exit ends the shell: the result says so and a new one starts in /work
    const ex = await run(c, sid, 'shell', 'echo bye; exit 3');
    assert.equal(ex.s.exit_code, 3);
    assert.match(ex.text, /the session's state was lost: the session's shell exited with status 3/);
    assert.equal(await out(c, sid, 'shell', 'pwd; echo "[$TOKEN]"'), '/work\n[]\n');
    await ok(c, 'session_close', { session_id: sid });
  });

  test('a timeout interrupts the code (KeyboardInterrupt) and keeps the state', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: 'kept = "still here"', session_id: sid });
    const r = await run(c, sid, 'python', 'import time\nwhile True:\n    time.sleep(0.05)', { timeout_seconds: 2 });
    assert.equal(r.r.isError, true);
    assert.equal(r.s.timed_out, true);
    assert.match(r.s.stderr, /KeyboardInterrupt/);
    assert.equal(r.s.session.interrupted, true);
    assert.equal(r.s.session.restarted, false);
    assert.match(r.text, /interrupted \(KeyboardInterrupt\).*kept its state/s);
    assert.equal(await out(c, sid, 'python', 'print(kept)'), 'still here\n');
    // a shell loop inside a function is interrupted too, and the shell lives on
    const sh = await open(c, 'shell');
    await ok(c, 'run_shell', { code: 'X=kept; spin() { while :; do :; done; }', session_id: sh });
    const rs = await run(c, sh, 'shell', 'spin\necho not-reached', { timeout_seconds: 2 });
    assert.equal(rs.s.session.interrupted, true);
    assert.equal(rs.s.session.restarted, false);
    assert.doesNotMatch(rs.s.stdout, /not-reached/);
    assert.equal(await out(c, sh, 'shell', 'echo $X'), 'kept\n');
    await ok(c, 'session_close', { session_id: sid });
    await ok(c, 'session_close', { session_id: sh });
  });

  test('cancelling a call (AbortSignal) interrupts it and keeps the state', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: 'kept = 41', session_id: sid });
    const ac = new AbortController();
    const p = c.client.callTool({ name: 'run_python', arguments: { code: 'import time\nwhile True: time.sleep(0.05)', session_id: sid } },
      undefined, { signal: ac.signal, timeout: LONG });
    await sleep(1000);
    ac.abort();
    await assert.rejects(p);
    // the next call waits for the interrupted one, then sees the state
    assert.equal(await out(c, sid, 'python', 'print(kept + 1)'), '42\n');
    await ok(c, 'session_close', { session_id: sid });
  });

  test('a runaway that ignores the interrupt: the interpreter is restarted and the result says so', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: 'kept = 1', session_id: sid });
    await ok(c, 'file_write', { session_id: sid, path: 'notes.txt', content: 'files survive a restart\n' });
    const r = await run(c, sid, 'python',
      'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass', { timeout_seconds: 2 });
    assert.equal(r.s.timed_out, true);
    assert.equal(r.s.session.restarted, true);
    assert.match(r.text, /the session's state was lost: the code did not stop when interrupted/);
    assert.match(r.text, /files in \/work are kept/);
    const after = await run(c, sid, 'python', 'print(open("notes.txt").read(), end=""); print(kept)');
    assert.equal(after.s.stdout, 'files survive a restart\n');
    assert.match(after.s.stderr, /NameError: name 'kept' is not defined/);
    await ok(c, 'session_close', { session_id: sid });
  });

  test('session_reset: fresh globals, files kept', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: 'v = 1\nopen("keep.txt", "w").write("k")', session_id: sid });
    await ok(c, 'session_reset', { session_id: sid });
    const r = await run(c, sid, 'python', 'print(open("keep.txt").read()); v');
    assert.equal(r.s.stdout, 'k\n');
    assert.match(r.s.stderr, /NameError/);
    await ok(c, 'session_close', { session_id: sid });
  });

  test('session_list: id, language, age, idle time, memory, running jobs', { timeout: LONG }, async () => {
    const a = await open(c, 'python');
    const b = await open(c, 'shell');
    await ok(c, 'run_python', { code: 'big = bytearray(40 << 20)', session_id: a });
    const { s, text } = await ok(c, 'session_list');
    const mine = Object.fromEntries(s.sessions.map((x) => [x.session_id, x]));
    assert.equal(mine[a].lang, 'python');
    assert.equal(mine[b].lang, 'shell');
    assert.ok(mine[a].memory_bytes > 40 << 20, JSON.stringify(mine[a]));
    assert.ok(mine[a].private_memory_bytes > 40 << 20, JSON.stringify(mine[a]));
    assert.ok(mine[b].memory_bytes > 0);
    assert.ok(mine[a].age_s >= 0 && mine[a].idle_s >= 0);
    assert.deepEqual(mine[a].running_jobs, []);
    assert.match(text, new RegExp(`${a} \\(python\\)`));
    await ok(c, 'session_close', { session_id: a });
    await ok(c, 'session_close', { session_id: b });
    const again = await ok(c, 'session_list');
    assert.ok(!again.s.sessions.some((x) => x.session_id === a || x.session_id === b));
  });

  test('unknown, malformed and closed ids get errors that say what to do', { timeout: LONG }, async () => {
    await fails(c, 'run_python', { code: '1', session_id: 's_' + '0'.repeat(32) }, /unknown session id .*session_open/s);
    await fails(c, 'run_python', { code: '1', session_id: 'nonsense' }, /unknown session id 'nonsense'/);
    await fails(c, 'file_list', { session_id: 's_x' }, /unknown session id/);
    const sid = await open(c, 'python');
    await ok(c, 'session_close', { session_id: sid });
    await fails(c, 'run_python', { code: '1', session_id: sid }, /was closed with session_close.*open a new session with session_open/s);
    await fails(c, 'session_close', { session_id: sid }, /was closed/);
    await fails(c, 'job_status', { job_id: 'j_' + '1'.repeat(32) }, /unknown job id/);
  });

  test('the audit log ties calls to their sessions and jobs', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: 'print(1)', session_id: sid });
    const { s } = await ok(c, 'job_start', { lang: 'python', code: 'print(2)', session_id: sid });
    await ok(c, 'job_status', { job_id: s.job_id });
    await ok(c, 'session_close', { session_id: sid });
    const lines = readFileSync(path.join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const bySession = lines.filter((l) => l.session === sid);
    const tools = new Set(bySession.map((l) => `${l.event} ${l.tool}`));
    for (const t of ['finished session_open', 'started run_python', 'finished run_python', 'finished job_start', 'finished session_close']) {
      assert.ok(tools.has(t), `${t} in ${[...tools]}`);
    }
    assert.ok(lines.some((l) => l.tool === 'job_start' && l.job === s.job_id && l.event === 'finished'));
    assert.ok(lines.some((l) => l.tool === 'job_status' && l.job === s.job_id && l.event === 'started'));
  });
});

describe('limits on sessions', () => {
  // A shell session's code filling /tmp and /dev/shm (tmpfs:
  // memory) past the memory limit got the controller OOM-killed, and the
  // session ended "without a word". The kernel's oom_kill count says why.
  test('a session that fills /tmp and /dev/shm past its memory limit is told it ran out of memory', { timeout: LONG }, async (t) => {
    const c = await sdkClient({ args: ['--memory', '256m'] });
    try {
      const sid = await open(c, 'shell');
      const probe = await ok(c, 'run_shell', { session_id: sid, code: 'true' });
      const by = probe.s.sandbox?.memory?.enforced_by ?? '';
      if (!/cgroup/.test(by)) {
        await ok(c, 'session_close', { session_id: sid });
        t.skip(`no memory cgroup here (${by}): tmpfs is not held to the memory limit`);
        return;
      }
      const fill = 'for i in $(seq 100); do head -c 16M /dev/zero > /dev/shm/f$i 2>/dev/null || '
        + 'head -c 16M /dev/zero > /tmp/f$i || break; done; echo survived';
      const { r, text } = await run(c, sid, 'shell', fill);
      assert.equal(r.isError, true, text);
      assert.doesNotMatch(text, /without a word/);
      assert.match(text, /ran out of memory: the kernel killed \d+ of its processes at its memory limit of \d+ MiB \(files in \/tmp and \/dev\/shm count against it\)/);
      // The advice is the memory advice, not "the sandbox failed"
      assert.doesNotMatch(text, /not a problem with your code/);
      assert.match(text, /The code ran out of memory: it needed more than the memory limit \(256m\)\. Make the computation smaller.*files in \/tmp and \/dev\/shm count against the limit/);
      assert.equal(r.structuredContent.out_of_memory, true, JSON.stringify(r.structuredContent));
      await fails(c, 'run_shell', { session_id: sid, code: 'true' }, /ran out of memory/);
    } finally {
      await closeClient(c);
    }
  });

  test('max_sessions: a clear error past the limit; 0 turns sessions off', { timeout: LONG }, async () => {
    const c = await sdkClient({ args: ['--max-sessions', '1'] });
    try {
      const sid = await open(c, 'shell');
      await fails(c, 'session_open', { lang: 'shell' }, /already have 1 open sessions.*max_sessions = 1.*session_close/s);
      await ok(c, 'session_close', { session_id: sid });
      await open(c, 'shell');
    } finally {
      await closeClient(c);
    }
    const off = await sdkClient({ env: { SAGEBOX_MAX_SESSIONS: '0' } });
    try {
      await fails(off, 'session_open', {}, /sessions are turned off here \(max_sessions = 0\)/);
    } finally {
      await closeClient(off);
    }
  });
});

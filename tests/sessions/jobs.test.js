// Background jobs: one survives a client that gives up after 4 s and its
// output can be paged by offset; a job in a session sees the session's
// variables and runs beside its calls; cancel, timeout, failure and the
// limits say what happened.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  sdkClient, closeClient, call, ok, fails, open, out, LONG, sleep,
} from './helpers.js';

async function waitState(c, id, done = (s) => !['queued', 'running'].includes(s.state), ms = 60000) {
  const end = Date.now() + ms;
  let st;
  while (Date.now() < end) {
    st = (await ok(c, 'job_status', { job_id: id })).s;
    if (done(st)) return st;
    await sleep(200);
  }
  assert.fail(`job ${id} still ${st && st.state}: ${JSON.stringify(st)}`);
}

describe('background jobs', () => {
  let c;
  before(async () => {
    c = await sdkClient({ args: ['--max-jobs', '3', '--job-timeout', '120'] });
  });
  after(async () => {
    if (c) await closeClient(c);
  });

  test('a job survives a 4 s client timeout, and its output is paged by offset', { timeout: LONG }, async () => {
    // 200,000 bytes of numbered lines over about 6 s
    const code = 'import time\nfor i in range(12):\n'
      + '    for k in range(1000):\n        print("%02d %013d" % (i, k))\n'
      + '    time.sleep(0.5)\nprint("finished")';
    const t0 = Date.now();
    const { s } = await ok(c, 'job_start', { lang: 'python', code }, { timeout: 4000 });
    assert.match(s.job_id, /^j_[0-9a-f]{32}$/);
    assert.ok(Date.now() - t0 < 4000, 'job_start returns at once');
    // a call whose client gives up after 4 s does not take the job with it
    await assert.rejects(c.client.callTool({ name: 'run_python', arguments: { code: 'import time; time.sleep(8)' } },
      undefined, { timeout: 4000 }));
    let mid = (await ok(c, 'job_status', { job_id: s.job_id })).s;
    assert.equal(mid.state, 'running', JSON.stringify(mid));
    // (its sandbox may still have been starting on a busy machine)
    for (let i = 0; i < 100 && !mid.output_bytes; i++) {
      await sleep(100);
      mid = (await ok(c, 'job_status', { job_id: s.job_id })).s;
    }
    assert.ok(mid.output_bytes > 0 && mid.runtime_ms > 0, JSON.stringify(mid));
    assert.match(mid.last_output, /(\d{2} \d{13}|finished)\n$/);
    const st = await waitState(c, s.job_id);
    assert.equal(st.state, 'done');
    assert.equal(st.exit_code, 0);
    assert.equal(st.output_bytes, 12 * 1000 * 17 + 9);
    let all = '';
    let offset = 0;
    let pages = 0;
    for (;;) {
      const page = (await ok(c, 'job_output', { job_id: s.job_id, offset })).s;
      assert.equal(page.offset, offset);
      assert.ok(page.next_offset - offset <= 65536);
      all += page.output;
      pages++;
      if (page.next_offset === page.end_offset) break;
      offset = page.next_offset;
    }
    assert.ok(pages >= 4, `${pages} pages`);
    const want = [];
    for (let i = 0; i < 12; i++) for (let k = 0; k < 1000; k++) want.push(`${String(i).padStart(2, '0')} ${String(k).padStart(13, '0')}`);
    assert.equal(all, want.join('\n') + '\nfinished\n');
  });

  test('a job in a session sees its variables, runs beside its calls, and changes nothing of it', { timeout: LONG }, async () => {
    const sid = await open(c, 'sage');
    await ok(c, 'run_sagemath', { code: 'R.<x> = QQ[]\nbase = 100', session_id: sid });
    const { s } = await ok(c, 'job_start', {
      lang: 'sage', session_id: sid,
      code: 'import time\nbase = -1\nfor i in range(4):\n    print(factor(x^(i + 2) - 1))\n    time.sleep(float(1/2))',
    });
    const listed = (await ok(c, 'session_list')).s.sessions.find((x) => x.session_id === sid);
    assert.deepEqual(listed.running_jobs, [s.job_id]);
    // the session takes calls while its job runs
    assert.equal(await out(c, sid, 'sage', 'print(base)'), '100\n');
    const st = await waitState(c, s.job_id);
    assert.equal(st.state, 'done', JSON.stringify(st));
    assert.equal(st.session_id, sid);
    const o = (await ok(c, 'job_output', { job_id: s.job_id })).s.output;
    assert.equal(o.split('\n')[0], '(x - 1) * (x + 1)');
    assert.equal(o.trim().split('\n').length, 4);
    assert.equal(await out(c, sid, 'sage', 'print(base)'), '100\n');
    await fails(c, 'job_start', { lang: 'shell', code: 'ls', session_id: sid }, /sage session: it cannot run a shell job/);
    await ok(c, 'session_close', { session_id: sid });
  });

  test('job_cancel stops a job and keeps its output; a timeout and a failure are said', { timeout: LONG }, async () => {
    const a = (await ok(c, 'job_start', { lang: 'shell', code: 'echo started; sleep 300' })).s.job_id;
    await waitState(c, a, (st) => st.output_bytes > 0);
    await ok(c, 'job_cancel', { job_id: a });
    const sa = await waitState(c, a);
    assert.equal(sa.state, 'cancelled');
    assert.equal((await ok(c, 'job_output', { job_id: a })).s.output, 'started\n');
    const b = (await ok(c, 'job_start', { lang: 'python', code: 'import time; time.sleep(60)', timeout_seconds: 2 })).s.job_id;
    const sb = await waitState(c, b);
    assert.equal(sb.state, 'timed_out');
    assert.match(sb.error, /longer than its timeout of 2 s/);
    const f = (await ok(c, 'job_start', { lang: 'python', code: 'import sys; print("oops", file=sys.stderr); sys.exit(3)' })).s.job_id;
    const sf = await waitState(c, f);
    assert.equal(sf.state, 'failed');
    assert.equal(sf.exit_code, 3);
    assert.match(sf.last_output, /oops/);
    const text = (await ok(c, 'job_status', { job_id: f })).text;
    assert.match(text, /failed after .* exit status 3/);
  });

  test('limits: job_timeout caps timeout_seconds, max_jobs caps jobs running at once', { timeout: LONG }, async () => {
    await fails(c, 'job_start', { lang: 'python', code: '1', timeout_seconds: 121 }, /at most 120 s here \(the job_timeout setting\)/);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await ok(c, 'job_start', { lang: 'shell', code: 'sleep 60' })).s.job_id);
    await fails(c, 'job_start', { lang: 'shell', code: 'true' }, /already have 3 background jobs running.*max_jobs = 3/s);
    for (const id of ids) await ok(c, 'job_cancel', { job_id: id });
    for (const id of ids) await waitState(c, id);
    await ok(c, 'job_start', { lang: 'shell', code: 'true' });
  });
});

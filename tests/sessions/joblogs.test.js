// Finished jobs' logs must not pin sagebox's own
// memory. 32 jobs that each print 8 MiB (the most a log keeps) raised the
// server's RSS from 5 to 273 MiB, outside every sandbox's memory limit. The
// logs now live on disk (an unnamed file each, in the state directory),
// and finished jobs' logs are kept up to 128 MiB for all clients together:
// job_status says when a job's output was dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { sdkClient, closeClient, ok, open, sleep } from './helpers.js';

const MIB = 1 << 20;

function rssOf(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'latin1').match(/^VmRSS:\s+(\d+) kB/m);
  return Number(m[1]) * 1024;
}

async function finished(c, id) {
  for (const end = Date.now() + 120000; Date.now() < end; await sleep(200)) {
    const st = (await ok(c, 'job_status', { job_id: id })).s;
    if (!['queued', 'running'].includes(st.state)) return st;
  }
  assert.fail(`job ${id} did not finish`);
}

test('32 jobs printing 8 MiB each: sagebox\'s RSS stays bounded; the oldest logs are dropped, and job_status says so', { timeout: 600000 }, async (t) => {
  const state = mkdtempSync(path.join(tmpdir(), 'sagebox-joblogs-'));
  // Under ASan (scripts/test sets ASAN_OPTIONS for that build) freed
  // memory is held in its quarantine (256 MiB by default), which is RSS the
  // server does not keep: no quarantine for this one server, so its RSS is
  // what it holds. Every other check of the build stays as it is.
  const asan = process.env.ASAN_OPTIONS;
  const env = { XDG_STATE_HOME: state };
  if (asan !== undefined)
    env.ASAN_OPTIONS = `${asan}:quarantine_size_mb=0:thread_local_quarantine_size_kb=0`;
  const c = await sdkClient({ env });
  try {
    const sid = await open(c, 'shell');
    const code = `head -c ${8 * MIB} /dev/zero | tr '\\0' x`;
    await finished(c, (await ok(c, 'job_start', { lang: 'shell', session_id: sid, code: 'echo warm' })).s.job_id);
    const before = rssOf(c.pid);
    const ids = [];
    for (let batch = 0; batch < 8; batch++) { // max_jobs is 4
      const started = [];
      for (let i = 0; i < 4; i++)
        started.push((await ok(c, 'job_start', { lang: 'shell', session_id: sid, code })).s.job_id);
      for (const id of started) {
        const st = await finished(c, id);
        assert.equal(st.state, 'done', JSON.stringify(st));
        assert.equal(st.output_bytes, 8 * MIB);
      }
      ids.push(...started);
    }
    await sleep(1500); // the reaper (every second) keeps the total
    const grew = rssOf(c.pid) - before;
    t.diagnostic(`sagebox's RSS: ${(before / MIB).toFixed(1)} MiB before, ${((before + grew) / MIB).toFixed(1)} MiB after`);
    assert.ok(grew < 48 * MIB, `sagebox's RSS grew by ${(grew / MIB).toFixed(1)} MiB over 32 jobs of 8 MiB`);

    // The newest job's log is whole, on disk: its last page and its tail.
    const last = (await ok(c, 'job_output', { job_id: ids[31], offset: 8 * MIB - 10 })).s;
    assert.equal(last.output, 'x'.repeat(10));
    assert.equal(last.dropped_bytes, 0);
    const newest = (await ok(c, 'job_status', { job_id: ids[31] })).s;
    assert.equal(newest.output_dropped_bytes, 0);
    assert.equal(newest.output_note, undefined);
    assert.match(newest.last_output, /^x+$/);
    // The oldest's were dropped to keep the total (128 MiB: 16 logs).
    const oldest = await ok(c, 'job_status', { job_id: ids[0] });
    assert.equal(oldest.s.output_dropped_bytes, 8 * MIB);
    assert.match(oldest.s.output_note, /dropped: finished jobs' logs are kept up to 128 MiB for all clients together/);
    assert.match(oldest.text, /8388608 bytes of output \(its output was dropped/);
    const page = (await ok(c, 'job_output', { job_id: ids[0], offset: 0 })).s;
    assert.equal(page.dropped_bytes, 8 * MIB);
    assert.equal(page.output, '');
    let kept = 0;
    for (const id of ids) kept += (await ok(c, 'job_status', { job_id: id })).s.output_dropped_bytes === 0;
    assert.equal(kept, 16, 'finished jobs\' logs fill the total and no more');
  } finally {
    await closeClient(c);
    rmSync(state, { recursive: true, force: true });
  }
});

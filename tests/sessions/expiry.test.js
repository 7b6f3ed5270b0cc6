// A session unused for session_idle_minutes is closed with everything in
// it, and its id then gets the promised error; a session running a job is
// in use, not idle. (The shortest setting is one minute: this test waits
// about 70 s.)
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  sdkClient, closeClient, ok, fails, open, out, sleep, waitGone, waitPresent, uniqueMarker, processesWith,
} from './helpers.js';

test('an idle session expires after session_idle_minutes; one with a running job does not', { timeout: 240000 }, async () => {
  const c = await sdkClient({ args: ['--session-idle-minutes', '1'] });
  try {
    const idle = await open(c, 'shell');
    const busy = await open(c, 'shell');
    const marker = uniqueMarker('expiry');
    await ok(c, 'run_shell', { code: `setsid sh -c 'sleep 300; true' ${marker} &`, session_id: idle });
    assert.ok(await waitPresent(marker));
    const job = (await ok(c, 'job_start', { lang: 'shell', code: 'sleep 100', session_id: busy })).s.job_id;
    assert.equal((await ok(c, 'session_open', { lang: 'python' })).s.idle_expiry_s, 60);
    await sleep(70000);
    await fails(c, 'run_shell', { code: 'true', session_id: idle },
      /session s_[a-z0-9-]{1,32}_[0-9a-f]{32} expired after 1 min idle and was closed.*open a new session with session_open/s);
    assert.deepEqual(await waitGone(marker, 5000), [], 'its processes died with it');
    assert.equal(await out(c, busy, 'shell', 'echo alive'), 'alive\n');
    assert.equal((await ok(c, 'job_status', { job_id: job })).s.state, 'running');
    await ok(c, 'job_cancel', { job_id: job });
  } finally {
    await closeClient(c);
  }
});

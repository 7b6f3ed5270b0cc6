// Each session is a sandbox of its own: two sessions see neither each
// other's variables nor files nor processes; closing a session kills
// everything it started (a setsid double-fork too); nothing outlives
// sagebox: closing stdin or SIGTERM ends every session and job, and after a
// SIGKILL of sagebox what is left (processes, cgroups) is gone or removed
// by the next start.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

import {
  sdkClient, closeClient, call, ok, open, run, out, LONG, sleep, processesWith, waitGone, waitPresent, uniqueMarker,
  jobEnded,
} from './helpers.js';

// A setsid'd, double-forked grandchild and a plain background child, both
// with marker on their command line, started from Python in a session.
function escapees(marker) {
  return 'import os, subprocess\n'
    + 'subprocess.Popen(["sh", "-c", "sleep 300; true", "' + marker + '"])\n'
    + 'if os.fork() == 0:\n'
    + '    os.setsid()\n'
    + '    if os.fork() == 0:\n'
    + '        os.execvp("sh", ["sh", "-c", "sleep 300; true", "' + marker + '"])\n'
    + '    os._exit(0)\n'
    + 'os.wait()\n';
}

describe('isolation between sessions', () => {
  let c;
  before(async () => {
    c = await sdkClient();
  });
  after(async () => {
    if (c) await closeClient(c);
  });

  test('two sessions see neither each other\'s variables, files nor processes', { timeout: LONG }, async () => {
    const a = await open(c, 'python');
    const b = await open(c, 'python');
    assert.notEqual(a, b);
    const marker = uniqueMarker('iso');
    await ok(c, 'run_python', { code: `secret = "${marker}"\nopen("secret.txt", "w").write(secret)\n` + escapees(marker), session_id: a });
    assert.ok(await waitPresent(marker), 'the marked processes of session a run');
    const seen = await run(c, b, 'python',
      'import os\n'
      + `print("secret" in globals(), os.path.exists("/work/secret.txt"), os.listdir("/work"))\n`
      + 'mine = []\n'
      + 'for p in os.listdir("/proc"):\n'
      + '    if p.isdigit():\n'
      + '        try:\n'
      + `            if b"${marker}" in open(f"/proc/{p}/cmdline", "rb").read(): mine.append(p)\n`
      + '        except OSError: pass\n'
      + 'print(mine)\n'
      + 'print([os.path.join(d, f) for top in ("/work", "/tmp", "/dev/shm") for d, _, fs in os.walk(top) for f in fs if f == "secret.txt"])\n');
    assert.equal(seen.s.stdout, 'False False []\n[]\n[]\n', seen.text);
    // b cannot signal what it cannot see; a's processes are untouched
    assert.ok(processesWith(marker).length >= 2);
    await ok(c, 'file_list', { session_id: b });
    const list = await ok(c, 'file_list', { session_id: a });
    assert.deepEqual(list.s.entries.map((e) => e.name), ['secret.txt']);
    await ok(c, 'session_close', { session_id: b });
    await ok(c, 'session_close', { session_id: a });
  });

  test('closing a session kills everything it started, a setsid double-fork and its jobs too', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    const marker = uniqueMarker('close');
    await ok(c, 'run_python', { code: escapees(marker), session_id: sid });
    const job = await ok(c, 'job_start', { lang: 'python', code: `import subprocess\nsubprocess.run(["sh", "-c", "sleep 300; true", "${marker}"])`, session_id: sid });
    assert.ok(await waitPresent(marker));
    await sleep(500);
    assert.ok(processesWith(marker).length >= 3, JSON.stringify(processesWith(marker)));
    const t0 = Date.now();
    await ok(c, 'session_close', { session_id: sid });
    assert.deepEqual(await waitGone(marker, 5000), [], 'every process of the session is gone');
    assert.ok(Date.now() - t0 < 10000);
    // its job ended with it, and says why
    const st = await jobEnded(async () => (await ok(c, 'job_status', { job_id: job.s.job_id })).s, 15000);
    assert.equal(st.state, 'cancelled', JSON.stringify(st));
    assert.match(st.error, /its session ended/);
  });
});

describe('nothing outlives sagebox', () => {
  test('closing stdin ends every session and job', { timeout: LONG }, async () => {
    const c = await sdkClient();
    const marker = uniqueMarker('stdin');
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: escapees(marker), session_id: sid });
    await ok(c, 'job_start', { lang: 'shell', code: `sh -c 'sleep 300; true' ${marker}` });
    assert.ok(await waitPresent(marker));
    await sleep(1500);
    assert.ok(processesWith(marker).length >= 3);
    await closeClient(c); // the SDK closes the server's stdin
    assert.deepEqual(await waitGone(marker, 15000), []);
  });

  test('SIGTERM ends every session and job; the server exits 0', { timeout: LONG }, async () => {
    const c = await sdkClient();
    const marker = uniqueMarker('term');
    const sid = await open(c, 'shell');
    await ok(c, 'run_shell', { code: `setsid sh -c 'sleep 300; true' ${marker} & sh -c 'sleep 300; true' ${marker} &`, session_id: sid });
    assert.ok(await waitPresent(marker));
    const exited = new Promise((resolve) => c.transport._process.on('exit', (code, sig) => resolve({ code, sig })));
    process.kill(c.pid, 'SIGTERM');
    assert.deepEqual(await exited, { code: 0, sig: null });
    assert.deepEqual(await waitGone(marker, 15000), []);
    await c.client.close().catch(() => {});
  });

  test('after a SIGKILL of sagebox its sessions die, and the next start removes their cgroups', { timeout: LONG }, async () => {
    const c = await sdkClient();
    const pid = c.pid;
    const marker = uniqueMarker('kill9');
    const sid = await open(c, 'python');
    await ok(c, 'run_python', { code: escapees(marker), session_id: sid });
    await ok(c, 'job_start', { lang: 'shell', code: `sh -c 'sleep 300; true' ${marker}` });
    assert.ok(await waitPresent(marker));
    await sleep(1000);
    const cgroupsBefore = staleCgroups(pid);
    process.kill(pid, 'SIGKILL');
    // native: each sandbox's outer process sees its caller gone and kills it
    assert.deepEqual(await waitGone(marker, 15000), []);
    await c.client.close().catch(() => {});
    const next = await sdkClient();
    try {
      const s2 = await open(next, 'shell'); // the first sandbox of a start sweeps
      assert.equal(await out(next, s2, 'shell', 'echo fine'), 'fine\n');
      const left = staleCgroups(pid);
      assert.deepEqual(left, [], `cgroups of the killed sagebox ${pid}: before ${cgroupsBefore.length}, after ${left.length}`);
    } finally {
      await closeClient(next);
    }
  });
});

// Cgroup directories a sagebox with this pid made (sagebox.<pid>.<n>).
function staleCgroups(pid) {
  const found = [];
  const walk = (dir, depth) => {
    if (depth > 8) return;
    let names;
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = path.join(dir, n);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (!st.isDirectory()) continue;
      if (n.startsWith(`sagebox.${pid}.`)) found.push(p);
      else walk(p, depth + 1);
    }
  };
  walk('/sys/fs/cgroup', 0);
  return found;
}

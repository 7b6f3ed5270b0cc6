// Three sagebox instances (sagebox-0..2, one token file) behind Debian's
// haproxy with docs/deploy/haproxy.cfg, scraped by Debian's prometheus,
// all on loopback, driven by 30 SDK clients (v2 with 2026-07-28 and v1 with
// the handshake, mixed):
//   - each opens a session (Python; a few Sage) through the router and
//     makes 10 calls that depend on the one before: every call reaches its
//     session's instance (each instance's audit log), none fails;
//   - stateless calls spread over all three (each >= 20 %);
//   - a header that disagrees with the body is refused behind the router too;
//   - prometheus' counters equal the calls made, its histogram's count too;
//   - kill -9 of one instance: its sessions' next calls get MCP's error
//     naming the handle within 5 s, the others see no failure, new
//     sessions open on the live ones;
//   - a rolling restart (drain, restart, next) of all three while 10
//     clients make stateless calls: none fails; a session on a draining
//     instance keeps working until it closes.
// One test of several steps: each needs the cluster the one before left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

import {
  Instance, Router, Prometheus, connect, freePort, tempDir, tokenFile, textOf, instanceOf, sleep, waitFor, MODERN,
} from './cluster.mjs';

const NAMES = ['sagebox-0', 'sagebox-1', 'sagebox-2'];
const CLIENTS = 30;
const SAGE_EVERY = 10; // every 10th client's session is Sage, the others Python
const TOKENS = 10;     // three clients a token

// A session call's code: call 1 sets n, the next ones add to it, call 10
// prints it (Sage and Python alike).
const step = (i) => (i === 1 ? 'n = 1' : i < 10 ? 'n = n + 1' : 'print("n =", n)');

async function call(c, name, args) {
  const r = await c.client.callTool({ name, arguments: args });
  c.calls++;
  return r;
}

test('three instances behind haproxy: routing by handle, spread, metrics, a lost instance, a rolling restart',
  { timeout: 600000 }, async (t) => {
    const dir = tempDir('cluster');
    const tokens = Object.fromEntries(Array.from({ length: TOKENS }, (_, i) => [`client-${i}`, randomBytes(24).toString('hex')]));
    tokens.prometheus = randomBytes(24).toString('hex');
    const tokenPath = tokenFile(dir, tokens);
    const ports = await Promise.all([0, 1, 2, 3, 4, 5].map(() => freePort()));
    const args = ['--max-sessions', '8', '--max-sessions-total', '32', '--drain-timeout', '60', '--backend', 'native'];
    const instances = NAMES.map((n, i) => new Instance(n, ports[i], { tokens: tokenPath, dir,
      args: i ? args : [...args, '--metrics-listen', `127.0.0.1:${ports[5]}`] }));
    const router = new Router(ports[3], instances, dir);
    const prom = new Prometheus(ports[4], instances, dir, tokens.prometheus);
    const clients = [];
    const started = Date.now();
    try {
      // The shipped configuration as it is, its addresses from the environment.
      const checked = router.check();
      assert.doesNotMatch(checked, /WARNING|ALERT/, checked);
      await Promise.all(instances.map((i) => i.start()));
      await router.start();
      await prom.start();

      // ---- 30 clients, a session each, calls 1..5 (the rest after a kill)
      for (let k = 0; k < CLIENTS; k++) {
        const era = k % 2 ? 'v1' : 'v2';
        const token = tokens[`client-${k % TOKENS}`];
        clients.push({ k, era, token, lang: k % SAGE_EVERY === 0 ? 'sage' : 'python', calls: 0,
          client: await connect(router.url, token, era, `scale-${era}-${k}`) });
      }
      await Promise.all(clients.map(async (c) => {
        const r = await call(c, 'session_open', { lang: c.lang });
        assert.equal(r.isError, false, textOf(r));
        c.sid = r.structuredContent.session_id;
        c.inst = instanceOf(c.sid);
        assert.ok(NAMES.includes(c.inst), `${c.sid} names one of the instances`);
      }));
      const run = (c, i) => call(c, c.lang === 'sage' ? 'run_sagemath' : 'run_python', { code: step(i), session_id: c.sid });
      await Promise.all(clients.map(async (c) => {
        for (let i = 1; i <= 5; i++) {
          const r = await run(c, i);
          assert.equal(r.isError, false, `${c.era} client ${c.k}, call ${i} on ${c.sid}: ${textOf(r)}`);
        }
      }));
      t.diagnostic(`sessions per instance: ${NAMES.map((n) => `${n} ${clients.filter((c) => c.inst === n).length}`).join(', ')}`);

      // ---- stateless calls spread over all three
      const stateless = clients.filter((c) => c.era === 'v2').slice(0, 10);
      const before = instances.map((i) => i.calls().filter((l) => l.tool === 'run_python' && !l.session).length);
      await Promise.all(stateless.map(async (c) => {
        for (let i = 0; i < 6; i++) {
          const r = await call(c, 'run_python', { code: 'print(6 * 7)' });
          assert.match(textOf(r), /42/);
        }
      }));
      const spread = instances.map((i, n) => i.calls().filter((l) => l.tool === 'run_python' && !l.session).length - before[n]);
      t.diagnostic(`60 stateless calls per instance: ${spread.join(', ')}`);
      assert.equal(spread.reduce((a, b) => a + b), 60);
      for (const n of spread) assert.ok(n >= 12, `each instance takes >= 20 % of the stateless calls: ${spread}`);

      // ---- a header that disagrees with the body, behind the router
      const victim = clients.find((c) => c.era === 'v2');
      const other = clients.find((c) => c.era === 'v2' && c.inst !== victim.inst);
      const msg = { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'run_python',
        arguments: { code: 'print(n)', session_id: victim.sid },
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } } };
      const res = await fetch(router.url, { method: 'POST', body: JSON.stringify(msg), headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${victim.token}`,
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run_python',
        'Mcp-Param-Session-Id': other.sid } });
      const refused = await res.json();
      assert.equal(res.status, 400, JSON.stringify(refused));
      assert.equal(refused.error.code, -32020, JSON.stringify(refused));

      // ---- every call so far reached its session's instance (audit logs)
      for (const c of clients) {
        const lines = instances.flatMap((i) => i.calls().filter((l) => l.session === c.sid && l.tool.startsWith('run_'))
          .map((l) => [i.name, l.tool]));
        assert.equal(lines.length, 5, `${c.sid}: 5 calls logged: ${JSON.stringify(lines)}`);
        assert.ok(lines.every(([n]) => n === c.inst), `${c.sid}'s calls all on ${c.inst}: ${JSON.stringify(lines)}`);
      }

      // ---- prometheus: the counters are the calls made (none more: /health is no call)
      const made = clients.reduce((a, c) => a + c.calls, 0);
      let sums;
      const counted = await waitFor(async () => {
        const calls = await prom.query('sum(sagebox_tool_calls_total)');
        const hist = await prom.query('sum(sagebox_tool_call_duration_seconds_count)');
        const up = await prom.query('count(up{job="sagebox"} == 1)');
        sums = { calls: calls[0]?.value, hist: hist[0]?.value, up: up[0]?.value };
        return sums.calls === made && sums.hist === made && sums.up === 3;
      }, 15000, 500);
      t.diagnostic(`prometheus: ${JSON.stringify(sums)} against ${made} calls made`);
      assert.ok(counted, `prometheus' sums ${JSON.stringify(sums)} equal the ${made} calls the clients made`);
      // The gauges: 30 sessions open (by language), warm workers on each instance.
      const open = await prom.query('sum by (lang) (sagebox_sessions_open)');
      assert.equal(open.find((x) => x.metric.lang === 'python')?.value, CLIENTS - CLIENTS / SAGE_EVERY, JSON.stringify(open));
      assert.equal(open.find((x) => x.metric.lang === 'sage')?.value, CLIENTS / SAGE_EVERY, JSON.stringify(open));
      const warm = await prom.query('sum by (instance) (sagebox_warm_workers{state!="starting"})');
      assert.equal(warm.length, 3, JSON.stringify(warm));
      for (const w of warm) assert.ok(w.value >= 1, `warm workers on each instance: ${JSON.stringify(warm)}`);
      const perTool = await prom.query('sum by (tool) (sagebox_tool_calls_total{outcome="ok"})');
      assert.equal(perTool.find((x) => x.metric.tool === 'session_open')?.value, CLIENTS);
      // The same metrics on --metrics-listen's address, without a token (and nothing else there).
      const bare = await fetch(`http://127.0.0.1:${ports[5]}/metrics`);
      assert.equal(bare.status, 200);
      assert.match(await bare.text(), /\nsagebox_instance_info\{name="sagebox-0"\} 1\n/);
      assert.equal((await fetch(`http://127.0.0.1:${ports[5]}/mcp`, { method: 'POST', body: '{}' })).status, 405);
      assert.equal((await fetch(`http://127.0.0.1:${ports[5]}/mcp`)).status, 404);
      assert.equal((await fetch(instances[0].url.replace('/mcp', '/metrics'))).status, 401);

      // ---- kill -9 one instance mid-run
      const dead = instances[2];
      dead.proc.kill('SIGKILL');
      await dead.exited;
      const killedAt = Date.now();
      await Promise.all(clients.map(async (c) => {
        if (c.inst === dead.name) {
          const t0 = Date.now();
          let err;
          try {
            await run(c, 6);
          } catch (e) {
            err = e;
          }
          const ms = Date.now() - t0;
          assert.ok(err, `${c.era} client ${c.k}: a call to ${c.sid} on the killed instance fails`);
          assert.match(String(err.message), /-32001|ended with its instance sagebox-2/, `${c.era}: ${err.message}`);
          assert.match(String(err.message), new RegExp(c.era === 'v2' ? c.sid : 'm_sagebox-2_'), err.message);
          assert.ok(ms < 5000, `the error came in ${ms} ms`);
          c.lost = true;
          return;
        }
        for (let i = 6; i <= 10; i++) {
          const r = await run(c, i);
          assert.equal(r.isError, false, `${c.era} client ${c.k}, call ${i} after the kill: ${textOf(r)}`);
          if (i === 10) assert.match(textOf(r), /n = 9\b/, `${c.sid} kept its state over 10 calls`);
        }
      }));
      t.diagnostic(`after kill -9 of ${dead.name} (${Date.now() - killedAt} ms): ` +
        `${clients.filter((c) => c.lost).length} sessions ended with it, the others finished their 10 calls`);
      for (const c of clients.filter((x) => !x.lost)) {
        const lines = instances.flatMap((i) => i.calls().filter((l) => l.session === c.sid && l.tool.startsWith('run_'))
          .map(() => i.name));
        assert.equal(lines.length, 10, `${c.sid}: 10 calls logged`);
        assert.ok(lines.every((n) => n === c.inst), `${c.sid}'s calls all on ${c.inst}`);
      }
      // New sessions open on the live instances (v1 clients of the lost
      // instance connect again: their MCP session ended with it too).
      for (const c of clients.filter((x) => x.lost)) {
        if (c.era === 'v1') {
          await c.client.close().catch(() => {});
          c.client = await connect(router.url, c.token, 'v1', `scale-v1-${c.k}-again`);
        }
        const r = await call(c, 'session_open', { lang: 'python' });
        assert.equal(r.isError, false, textOf(r));
        c.sid = r.structuredContent.session_id;
        c.inst = instanceOf(c.sid);
        assert.ok(c.inst !== dead.name, `a new session opens on a live instance: ${c.sid}`);
      }
      for (const c of clients) await call(c, 'session_close', { session_id: c.sid });
      for (const c of clients) await c.client.close().catch(() => {});
      clients.length = 0;
      await dead.start();
      assert.ok(await waitFor(async () => (await fetch(dead.url.replace('/mcp', '/health'))).ok, 10000));

      // ---- rolling restart while 10 clients make stateless calls
      const workers = [];
      for (let k = 0; k < 10; k++)
        workers.push({ k, era: 'v2', calls: 0, client: await connect(router.url, tokens[`client-${k}`], 'v2', `roll-${k}`) });
      let rolling = true;
      const failures = [];
      const loops = workers.map(async (w) => {
        while (rolling) {
          try {
            const r = await call(w, 'run_python', { code: 'print(7 * 6)' });
            if (r.isError || !/42/.test(textOf(r))) failures.push(textOf(r));
          } catch (e) {
            failures.push(String(e.message));
          }
        }
      });
      for (const inst of instances) {
        // A session on this instance (opened on it directly), used through
        // the router while the instance drains.
        const own = await connect(inst.url, tokens['client-0'], 'v2', `own-${inst.name}`);
        const opened = await own.callTool({ name: 'session_open', arguments: { lang: 'python' } });
        const sid = opened.structuredContent.session_id;
        assert.equal(instanceOf(sid), inst.name);
        const via = await connect(router.url, tokens['client-0'], 'v2', `via-${inst.name}`);
        await via.callTool({ name: 'run_python', arguments: { code: 'm = 1', session_id: sid } });
        const drainStart = Date.now();
        const drained = inst.drain();
        assert.ok(await waitFor(async () => (await fetch(inst.url.replace('/mcp', '/health'))).status === 404, 5000),
          `${inst.name}'s /health says draining`);
        await sleep(1500); // the router has seen it
        for (let i = 0; i < 3; i++) {
          const r = await via.callTool({ name: 'run_python', arguments: { code: 'm = m + 1\nprint("m =", m)', session_id: sid } });
          assert.equal(r.isError, false, `a session on draining ${inst.name}: ${textOf(r)}`);
          assert.match(textOf(r), new RegExp(`m = ${i + 2}`));
        }
        const fresh = await via.callTool({ name: 'session_open', arguments: { lang: 'python' } });
        assert.notEqual(instanceOf(fresh.structuredContent?.session_id), inst.name, 'no new session on a draining instance');
        await via.callTool({ name: 'session_close', arguments: { session_id: fresh.structuredContent.session_id } });
        await via.callTool({ name: 'session_close', arguments: { session_id: sid } });
        await own.close();
        await via.close();
        const said = await drained; // returns once the server stopped
        assert.match(said, /draining instance/);
        assert.match(said, /stopped/);
        t.diagnostic(`${inst.name} drained in ${Date.now() - drainStart} ms: ${inst.log.split('\n').filter((l) => /drain/.test(l)).join(' | ')}`);
        await inst.exited;
        await inst.start();
        assert.ok(await waitFor(async () => (await fetch(inst.url.replace('/mcp', '/health'))).ok, 10000));
        await sleep(2500); // the router's checks rise it again (rise 2)
      }
      rolling = false;
      await Promise.all(loops);
      const total = workers.reduce((a, w) => a + w.calls, 0);
      t.diagnostic(`rolling restart: ${total} stateless calls, ${failures.length} failed`);
      assert.deepEqual(failures, [], failures.join('\n'));
      assert.ok(total > 30, `the clients kept calling (${total} calls)`);
      for (const w of workers) await w.client.close().catch(() => {});
      t.diagnostic(`the whole run: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    } finally {
      for (const c of clients) await c.client.close().catch(() => {});
      await prom.stop();
      await router.stop();
      for (const i of instances) await i.stop();
      for (const i of instances)
        assert.doesNotMatch(i.log, /ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:/, i.log);
    }
  });

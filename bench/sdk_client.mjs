// bench/run's MCP client: the official MCP TypeScript SDK (the one
// tests/mcp installs), driving `sagebox mcp` over stdio. bench/run passes a
// plan as JSON in argv[2] and reads one JSON object from stdout.
//
// Plans (mode):
//   calls       one server; wait for warm workers; steps of calls, each
//               {name, tool, args, expect, n, gap_ms, warmup}; per call the
//               time in ms and the client's send/receive stamps
//               (CLOCK_MONOTONIC microseconds, the server's trace clock)
//   first       time from spawning the server to the first call's result;
//               with then {n, gap_ms}, the times of n calls after it
//   throughput  `clients` servers, each called back to back for duration_ms
//   session     session rows: the first session_open, opens with
//               a spare ready (each closed, then pause_ms for the next spare),
//               `nop` calls in an open session back to back, and the idle
//               session's memory as session_list reports it
//
// A server is {command, args, env}. Progress goes to stderr.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const plan = JSON.parse(process.argv[2]);
const sdk = plan.sdk_dir;
const { Client } = await import(pathToFileURL(path.join(sdk, 'dist/esm/client/index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(sdk, 'dist/esm/client/stdio.js')).href);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nowUs = () => process.hrtime.bigint() / 1000n; // CLOCK_MONOTONIC on Linux (libuv)
const TIMEOUT = { timeout: 600000 };

async function connect(server) {
  const transport = new StdioClientTransport({
    command: server.command, args: server.args, env: server.env, stderr: 'pipe',
  });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(d.toString()));
  const client = new Client({ name: 'sagebox-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport, stderr };
}

function check(step, r) {
  const sc = r.structuredContent;
  const text = (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  const out = sc && typeof sc.stdout === 'string' ? sc.stdout : text;
  if (r.isError || (sc && 'exit_code' in sc && sc.exit_code !== 0) || (step.expect && !out.includes(step.expect))) {
    throw new Error(`${step.tool} failed: ${JSON.stringify(r).slice(0, 1500)}`);
  }
  return sc;
}

async function call(c, step, args) {
  const sent = nowUs();
  const t0 = performance.now();
  const r = await c.client.callTool({ name: step.tool, arguments: args || step.args }, undefined, TIMEOUT);
  const ms = performance.now() - t0;
  const got = nowUs();
  return { ms, sent: sent.toString(), got: got.toString(), sc: check(step, r) };
}

// CPU time (ms) of pid and its descendants, live ones (/proc/PID/stat:
// utime, stime, and those of the children they have reaped).
function treeCpuMs(pid) {
  const kids = new Map();
  const stat = {};
  for (const p of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(p)) continue;
    let f;
    try { f = fs.readFileSync(`/proc/${p}/stat`, 'utf8'); } catch { continue; }
    const w = f.slice(f.lastIndexOf(')') + 2).split(' ');
    stat[p] = w;
    if (!kids.has(w[1])) kids.set(w[1], []);
    kids.get(w[1]).push(p);
  }
  let ticks = 0;
  const todo = [String(pid)];
  while (todo.length) {
    const p = todo.pop();
    const w = stat[p];
    if (w) ticks += Number(w[11]) + Number(w[12]) + Number(w[13]) + Number(w[14]);
    todo.push(...(kids.get(p) || []));
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

// Until the server's processes use under 2% of a CPU for a second: the
// Sage worker's warm-ups (plot, Maxima) run once it is ready, a few
// seconds on a fast machine, longer on a slow one, and a measured call
// must not share the CPUs with them.
async function waitQuiet(c, limitMs = 120000) {
  const pid = c.transport.pid;
  if (!pid) return;
  const deadline = Date.now() + limitMs;
  let before = treeCpuMs(pid);
  while (Date.now() < deadline) {
    await sleep(1000);
    const now = treeCpuMs(pid);
    if (now - before < 20) return;
    before = now;
  }
  throw new Error(`the server still busy ${limitMs / 1000} s after its workers were ready`);
}

async function waitWarm(c, kinds, settleMs) {
  const deadline = Date.now() + 300000;
  for (;;) {
    const r = await c.client.callTool({ name: 'sandbox_status', arguments: {} }, undefined, TIMEOUT);
    const ws = r.structuredContent?.pool?.workers || [];
    if (kinds.every((k) => ws.some((w) => w.kind === k && w.state === 'idle'))) break;
    if (Date.now() > deadline) throw new Error(`no idle ${kinds} worker after 300 s`);
    await sleep(200);
  }
  await sleep(settleMs); // the worker's warm-ups (plot, Maxima) run once it is ready
  await waitQuiet(c);
}

async function calls() {
  const c = await connect(plan.server);
  const out = { steps: {} };
  try {
    if (plan.wait_kinds?.length) await waitWarm(c, plan.wait_kinds, plan.settle_ms ?? 12000);
    for (const step of plan.steps) {
      process.stderr.write(`  ${step.name} ...\n`);
      let args = step.args;
      if (step.open) { // a session: opened once, its id added to every call
        const o = await call(c, { tool: step.open.tool, args: step.open.args });
        args = { ...step.args, session_id: o.sc.session_id };
      }
      for (let i = 0; i < (step.warmup ?? 1); i++) await call(c, step, args);
      const xs = [];
      for (let i = 0; i < step.n; i++) {
        const r = await call(c, step, args);
        xs.push({ ms: r.ms, sent: r.sent, got: r.got, sc: step.keep ? r.sc : undefined });
        if (step.gap_ms) await sleep(step.gap_ms);
      }
      out.steps[step.name] = xs;
    }
  } finally {
    await c.client.close();
  }
  await sleep(200);
  out.stderr = c.stderr.join('');
  return out;
}

async function first() {
  const t0 = performance.now();
  const c = await connect(plan.server);
  try {
    await call(c, plan.step);
    const ms = performance.now() - t0;
    // then: {n, gap_ms}: n more calls, each gap_ms after the one before
    // (a model's next calls, while the worker warms up)
    const next = [];
    for (let i = 0; i < (plan.then?.n ?? 0); i++) {
      await sleep(plan.then.gap_ms);
      next.push((await call(c, plan.step)).ms);
    }
    return { ms, next };
  } finally {
    await c.client.close();
  }
}

async function throughput() {
  const cs = await Promise.all(Array.from({ length: plan.clients }, () => connect(plan.server)));
  try {
    await Promise.all(cs.map((c) => waitWarm(c, plan.wait_kinds, 0)));
    await sleep(plan.settle_ms ?? 12000);
    await Promise.all(cs.map((c) => call(c, plan.step)));
    const counts = cs.map(() => 0);
    const t0 = performance.now();
    const stop = t0 + plan.duration_ms;
    await Promise.all(cs.map(async (c, i) => {
      while (performance.now() < stop) {
        await call(c, plan.step);
        counts[i]++;
      }
    }));
    const s = (performance.now() - t0) / 1000;
    return { jobs_per_s: counts.reduce((a, b) => a + b, 0) / s, counts };
  } finally {
    await Promise.all(cs.map((c) => c.client.close()));
  }
}

async function session() {
  const c = await connect(plan.server);
  const st = (tool) => ({ tool, args: {} });
  const open = async () => {
    const r = await call(c, { tool: 'session_open', args: { lang: plan.lang } });
    return { ms: r.ms, id: r.sc.session_id };
  };
  const close = (id) => call(c, { tool: 'session_close' }, { session_id: id });
  try {
    const f = await open();
    await close(f.id);
    const opens = [];
    for (let i = 0; i < plan.opens; i++) {
      await sleep(plan.pause_ms);
      const o = await open();
      opens.push(o.ms);
      await close(o.id);
    }
    await sleep(plan.pause_ms);
    const o = await open();
    const run = { tool: plan.tool, expect: '' };
    const args = { code: plan.nop, session_id: o.id };
    for (let i = 0; i < 3; i++) await call(c, run, args); // an interpreter's first calls
    const calls = [];
    for (let i = 0; i < plan.n; i++) calls.push((await call(c, run, args)).ms);
    await sleep(1000);
    const list = await call(c, st('session_list'), {});
    const me = (list.sc?.sessions || []).find((x) => x.session_id === o.id) || {};
    await close(o.id);
    return { first_ms: f.ms, opens, calls, rss: me.memory_bytes || 0, private: me.private_memory_bytes || 0 };
  } finally {
    await c.client.close();
  }
}

const modes = { calls, first, throughput, session };
try {
  const res = await modes[plan.mode]();
  // Exit once the answer is written: a pipe may take it asynchronously, and
  // process.exit() right after write() cut a large answer short (bench/run
  // then failed with 'Unterminated string').
  process.stdout.write(JSON.stringify(res) + '\n', () => process.exit(0));
} catch (e) {
  process.stderr.write(`sdk_client: ${e.stack || e}\n`);
  process.exit(1);
}

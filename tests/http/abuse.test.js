// HTTP abuse from real clients (node's fetch and raw sockets) against one
// `sagebox mcp --http` with two named tokens (alice, bob) and 50 more:
// missing and wrong tokens, one client's session id used with another's
// token, bad Origin and Host, oversized bodies and headers, too many
// requests in flight (429), a burst of 1,000 requests, 50 clients each running a job at once, a slow-loris client, and
// a client that hangs up mid-call (its job is killed, nothing left running).
// After each, the server still answers others; at the end it exits cleanly
// (and, in the ASan+UBSan build, without a sanitizer report).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

import { TOOL_NAMES, startServer, tokenFile, tempDir, modern, modernHeaders, meta, readAnswer, uniqueMarker, markedSleep,
  processesWith, waitFor, sleep } from './helpers.js';

const tok = () => randomBytes(24).toString('hex');
const tokens = { alice: tok(), bob: tok() };
for (let i = 0; i < 50; i++) tokens[`c${i}`] = tok();

describe('HTTP abuse', { timeout: 900000 }, () => {
  let s, audit;
  before(async () => {
    audit = path.join(tempDir('audit'), 'audit.jsonl');
    s = await startServer({
      args: ['--token-file', tokenFile(tokens), '--http-request-timeout', '3', '--http-max-inflight', '16',
        '--http-max-inflight-total', '96', '--http-max-body', String(1 << 20), '--audit-log', audit],
    });
    process.env.__SB_URL = s.url;
  });
  after(async () => {
    const r = await s.stop();
    assert.equal(r.code, 0, s.stderr());
  });

  // The server still answers a well-behaved client.
  async function healthy() {
    const a = await modern(s.url, tokens.alice, 'tools/list');
    assert.equal(a.status, 200, a.text);
    assert.equal(a.answer.result.tools.length, TOOL_NAMES.length);
  }

  const post = (headers, body) => fetch(s.url, { method: 'POST', headers, body });

  test('no token, a wrong token, a malformed header: 401 with WWW-Authenticate', async () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta() } };
    for (const auth of [undefined, `Bearer ${tok()}`, `Bearer ${tokens.alice}x`, `Bearer ${tokens.alice.slice(0, -1)}`,
      `Basic ${tokens.alice}`, 'Bearer ']) {
      const h = modernHeaders(msg);
      if (auth) h.Authorization = auth;
      const r = await post(h, JSON.stringify(msg));
      assert.equal(r.status, 401, auth);
      assert.match(r.headers.get('www-authenticate') || '', /^Bearer/);
      await r.text();
    }
    await healthy();
  });

  test("a client cannot use, end or see another's session", async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'a', version: '1' } } };
    const h = (t, extra = {}) => ({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${t}`, ...extra });
    const r = await post(h(tokens.alice), JSON.stringify(init));
    assert.equal(r.status, 200);
    const sid = r.headers.get('mcp-session-id');
    assert.match(sid, /^m_[a-z0-9-]{1,32}_[0-9a-f]{32}$/);
    await r.text();
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const mine = await readAnswer(await post(h(tokens.alice, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' }), list));
    assert.equal(mine.status, 200);
    // Bob presents Alice's session id: not found, as if it did not exist.
    const theirs = await post(h(tokens.bob, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' }), list);
    assert.equal(theirs.status, 404);
    await theirs.text();
    const del = await fetch(s.url, { method: 'DELETE', headers: h(tokens.bob, { 'Mcp-Session-Id': sid }) });
    assert.equal(del.status, 404);
    // ...and Alice's session still works; she can end it, after which it is gone.
    assert.equal((await post(h(tokens.alice, { 'Mcp-Session-Id': sid }), list)).status, 200);
    assert.equal((await fetch(s.url, { method: 'DELETE', headers: h(tokens.alice, { 'Mcp-Session-Id': sid }) })).status, 200);
    assert.equal((await post(h(tokens.alice, { 'Mcp-Session-Id': sid }), list)).status, 404);
    // The status names the caller only; calls are recorded under its own name.
    const st = await modern(s.url, tokens.bob, 'tools/call', { name: 'sandbox_status', arguments: {} });
    assert.equal(st.answer.result.structuredContent.mcp.client, 'bob');
    assert.doesNotMatch(JSON.stringify(st.answer.result), /alice/);
    const c = await modern(s.url, tokens.bob, 'tools/call', { name: 'run_shell', arguments: { code: 'echo bob' } });
    assert.equal(c.answer.result.isError, false);
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.some((l) => l.client === 'bob' && l.event === 'finished'));
    assert.ok(!lines.some((l) => l.client === 'alice'));
  });

  test("another token's sessions, files and jobs are unknown; the status shows each client its own usage", async () => {
    const call = (t, name, args = {}) => modern(s.url, t, 'tools/call', { name, arguments: args });
    const okCall = async (t, name, args) => {
      const a = await call(t, name, args);
      assert.equal(a.answer?.result?.isError, false, `${name}: ${a.text}`);
      return a.answer.result.structuredContent;
    };
    const refused = async (name, args) => {
      const a = await call(tokens.bob, name, args);
      assert.equal(a.status, 200, a.text);
      assert.equal(a.answer.result.isError, true, `${name} by bob: ${a.text}`);
      assert.match(a.text, /unknown (session|job)/, `${name} by bob`);
    };
    const sid = (await okCall(tokens.alice, 'session_open', { lang: 'python' })).session_id;
    await okCall(tokens.alice, 'run_python', { code: 'secret = 7', session_id: sid });
    await okCall(tokens.alice, 'file_write', { session_id: sid, path: 'a.txt', content: 'alice\n' });
    const marker = uniqueMarker('owned');
    const job = (await okCall(tokens.alice, 'job_start', { lang: 'shell', code: markedSleep(marker) })).job_id;
    assert.ok(await waitFor(() => processesWith(marker).length > 0), 'alice\'s job started');

    assert.deepEqual((await okCall(tokens.bob, 'session_list', {})).sessions, []);
    await refused('run_python', { code: 'print(secret)', session_id: sid });
    await refused('file_read', { session_id: sid, path: 'a.txt' });
    await refused('file_list', { session_id: sid });
    await refused('job_status', { job_id: job });
    await refused('job_output', { job_id: job });
    await refused('job_cancel', { job_id: job });
    await refused('session_reset', { session_id: sid });
    await refused('session_close', { session_id: sid });

    // The status: each client its own usage, never another's name or ids.
    const mine = await okCall(tokens.alice, 'sandbox_status', {});
    assert.deepEqual(mine.mcp.usage, { sessions: 1, max_sessions: 4, max_sessions_total: 16, running_jobs: 1,
      max_jobs: 4, max_jobs_total: 16 });
    const theirs = await call(tokens.bob, 'sandbox_status', {});
    assert.equal(theirs.answer.result.structuredContent.mcp.client, 'bob');
    assert.equal(theirs.answer.result.structuredContent.mcp.usage.sessions, 0);
    assert.equal(theirs.answer.result.structuredContent.mcp.usage.running_jobs, 0);
    assert.doesNotMatch(theirs.text, new RegExp(`alice|${sid}|${job}`));

    // Alice's things are untouched, and she can end them.
    assert.equal((await okCall(tokens.alice, 'job_status', { job_id: job })).state, 'running');
    assert.match((await call(tokens.alice, 'run_python', { code: 'print(secret)', session_id: sid })).text, /7\\n/);
    await okCall(tokens.alice, 'job_cancel', { job_id: job });
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), JSON.stringify(processesWith(marker)));

    // A client that hangs up during a call in its session: the call is
    // interrupted, nothing it started is left running, the session goes on.
    const m2 = uniqueMarker('sessionhangup');
    const ac = new AbortController();
    const pending = modern(s.url, tokens.alice, 'tools/call', { name: 'run_python', arguments: { session_id: sid,
      code: `import subprocess\nsubprocess.run(['bash', '-c', 'exec -a ${m2} sleep 300'])` } }, { signal: ac.signal })
      .catch(() => 'aborted');
    assert.ok(await waitFor(() => processesWith(m2).length > 0), 'the call started');
    ac.abort();
    assert.equal(await pending, 'aborted');
    assert.ok(await waitFor(() => processesWith(m2).length === 0, 20000), JSON.stringify(processesWith(m2)));
    assert.ok(await waitFor(async () => /\b8\b/.test((await call(tokens.alice, 'run_python',
      { code: 'print(secret + 1)', session_id: sid })).text), 20000), 'the session answers again');
    await okCall(tokens.alice, 'session_close', { session_id: sid });
  });

  test('bad Origin and Host: 403 (DNS rebinding)', async () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta() } };
    for (const extra of [{ Origin: 'http://evil.example' }, { Origin: 'null' }, { Origin: 'http://127.0.0.1.evil.example' }]) {
      const r = await post(modernHeaders(msg, tokens.alice, extra), JSON.stringify(msg));
      assert.equal(r.status, 403, JSON.stringify(extra));
      await r.text();
    }
    const ok = await post(modernHeaders(msg, tokens.alice, { Origin: new URL(s.url).origin }), JSON.stringify(msg));
    assert.equal(ok.status, 200);
    await ok.text();
    // fetch cannot forge Host: a raw request does.
    const raw = await rawRequest(`POST /mcp HTTP/1.1\r\nHost: evil.example:80\r\nAuthorization: Bearer ${tokens.alice}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
    assert.match(raw, /^HTTP\/1\.1 403/);
    await healthy();
  });

  test('oversized body (413), declared or chunked, and oversized headers', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'run_python', arguments: { code: '#'.repeat(2 << 20) }, _meta: meta() } });
    const r = await post(modernHeaders({ method: 'tools/call', params: { name: 'run_python' } }, tokens.alice), big);
    assert.equal(r.status, 413);
    await r.text();
    // Chunked, with no Content-Length: cut off as it arrives.
    const chunked = await rawRequest(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.alice}\r\n` +
      'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' +
      `200000\r\n${'x'.repeat(0x200000)}\r\n0\r\n\r\n`);
    assert.match(chunked, /^HTTP\/1\.1 413/);
    const headers = await rawRequest(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(100000)}\r\n\r\n`);
    assert.match(headers, /^HTTP\/1\.1 (431|413|400)/);
    await healthy();
  });

  test('requests in flight per client: the 17th gets 429 with Retry-After, others are served, slots come back', async () => {
    // A burst of quick requests rarely has 16 in flight at once; 16 calls
    // that run (or wait for a job slot) do.
    const marker = uniqueMarker('inflight');
    const acs = Array.from({ length: 16 }, () => new AbortController());
    const pending = acs.map((ac) => modern(s.url, tokens.alice, 'tools/call',
      { name: 'run_shell', arguments: { code: markedSleep(marker) } }, { signal: ac.signal }).catch(() => 'aborted'));
    try {
      assert.ok(await waitFor(() => processesWith(marker).length > 0), 'a job started');
      await sleep(500); // every request of the 16 has reached the server
      const r = await modern(s.url, tokens.alice, 'tools/list');
      assert.equal(r.status, 429, r.text);
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
      assert.match(r.messages[0]?.error?.message || '', /Too Many Requests/);
      assert.equal((await modern(s.url, tokens.bob, 'tools/list')).status, 200);
    } finally {
      acs.forEach((ac) => ac.abort());
      await Promise.all(pending);
    }
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), JSON.stringify(processesWith(marker)));
    assert.ok(await waitFor(async () => (await modern(s.url, tokens.alice, 'tools/list')).status === 200, 10000),
      "alice's slots came back when her calls ended");
  });

  test('1,000 requests in a burst: each answered (200) or refused with 429 and Retry-After', async (t) => {
    const statuses = {};
    // Its own connection pool, closed after: the burst's kept-alive
    // connections do not stay open against the server's connection limit
    // into the next test.
    const { Agent, fetch: ufetch } = await import('undici');
    const dispatcher = new Agent();
    await Promise.all(Array.from({ length: 1000 }, async (_, i) => {
      let status;
      try {
        const msg = { jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: meta() } };
        const r = await ufetch(s.url, { method: 'POST', headers: modernHeaders(msg, tokens.alice), body: JSON.stringify(msg),
          dispatcher });
        status = r.status;
        if (status === 429) assert.ok(Number(r.headers.get('retry-after')) >= 1);
        await r.text();
      } catch (e) {
        status = `error ${e.cause?.code || e.message}`;
      }
      statuses[status] = (statuses[status] || 0) + 1;
    }));
    await dispatcher.destroy();
    // Refused connections are counted in the log, not written a line each.
    const refusedLines = (s.stderr().match(/connection limit/g) || []).length;
    assert.ok(refusedLines <= 30, `${refusedLines} log lines about the connection limit`);
    t.diagnostic(`burst of 1000: ${JSON.stringify(statuses)}`);
    for (const k of Object.keys(statuses)) assert.ok(k === '200' || k === '429' || k.startsWith('error'), JSON.stringify(statuses));
    assert.ok(statuses['200'] >= 16, JSON.stringify(statuses));
    // Another client is not locked out by alice's burst.
    const b = await modern(s.url, tokens.bob, 'tools/list');
    assert.equal(b.status, 200);
    await healthy();
  });

  test('50 clients, each with its own token, each running a job at once', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      modern(s.url, tokens[`c${i}`], 'tools/call', { name: 'run_python', arguments: { code: `print(${i} * 2)` } })));
    results.forEach((a, i) => {
      assert.equal(a.status, 200, a.text);
      assert.equal(a.answer.result.isError, false, JSON.stringify(a.answer));
      assert.match(a.answer.result.content[0].text, new RegExp(`^${i * 2}\\n`));
    });
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (let i = 0; i < 50; i++) assert.ok(lines.some((l) => l.client === `c${i}` && l.event === 'finished'), `c${i}`);
  });

  test('a slow-loris client is cut off and does not hold up others', async () => {
    const u = new URL(s.url);
    const sock = net.connect(Number(u.port), u.hostname);
    await new Promise((r) => sock.on('connect', r));
    let closed = false;
    sock.on('close', () => (closed = true));
    sock.on('error', () => {});
    const start = Date.now();
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.alice}\r\nX-Slow: `;
    let i = 0;
    const timer = setInterval(() => {
      if (!closed) sock.write(i < head.length ? head[i++] : 'a');
    }, 200);
    try {
      await healthy(); // others are answered meanwhile
      assert.ok(await waitFor(() => closed, 15000), 'the slow client was cut off');
      const took = Date.now() - start;
      assert.ok(took >= 2500 && took < 10000, `cut off after ${took} ms (request timeout 3 s)`);
    } finally {
      clearInterval(timer);
      sock.destroy();
    }
    assert.match(s.stderr(), /took over 3 s to send a request/);
    await healthy();
  });

  test('a client that hangs up mid-call: its job is killed, nothing is left running', async () => {
    for (const sse of [true, false]) {
      const marker = uniqueMarker(sse ? 'sse' : 'json');
      const ac = new AbortController();
      const msg = { jsonrpc: '2.0', id: 1, method: 'tools/call',
        params: { name: 'run_shell', arguments: { code: markedSleep(marker) }, _meta: meta() } };
      const h = modernHeaders(msg, tokens.alice, sse ? {} : { Accept: 'application/json' });
      const pending = fetch(s.url, { method: 'POST', headers: h, body: JSON.stringify(msg), signal: ac.signal })
        .then((r) => r.text()).catch(() => 'aborted');
      assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job started');
      ac.abort();
      assert.equal(await pending, 'aborted');
      assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000),
        `still running after the client left: ${JSON.stringify(processesWith(marker))}`);
    }
    await healthy();
    assert.match(s.stderr(), /cancellation requested: the client closed the request's HTTP stream/);
  });

  test('ending a session (DELETE) kills its running calls', async () => {
    const h = (extra = {}) => ({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${tokens.alice}`, ...extra });
    const init = await post(h(), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'a', version: '1' } } }));
    const sid = init.headers.get('mcp-session-id');
    await init.text();
    const marker = uniqueMarker('delete');
    const pending = post(h({ 'Mcp-Session-Id': sid }), JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call',
      params: { name: 'run_shell', arguments: { code: markedSleep(marker) } } })).then((r) => r.text()).catch(() => '');
    assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job started');
    const del = await fetch(s.url, { method: 'DELETE', headers: h({ 'Mcp-Session-Id': sid }) });
    assert.equal(del.status, 200);
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), JSON.stringify(processesWith(marker)));
    await pending;
    await healthy();
  });
});

// One raw HTTP exchange; resolves with everything the server sent.
function rawRequest(text) {
  const u = new URL(process.env.__SB_URL || 'http://127.0.0.1');
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let out = '';
    sock.on('data', (d) => (out += d.toString('latin1')));
    sock.on('close', () => resolve(out));
    sock.on('error', () => resolve(out));
    sock.setTimeout(20000, () => sock.destroy());
    sock.on('connect', () => sock.write(text));
  });
}

describe('TLS', { timeout: 120000 }, () => {
  test('--tls-cert/--tls-key serve HTTPS; plain HTTP to it gets nothing', async (t) => {
    const { execFileSync } = await import('node:child_process');
    const dir = tempDir('tls');
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
        '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', `${dir}/key.pem`, '-out', `${dir}/cert.pem`], { stdio: 'ignore' });
    } catch {
      t.skip('openssl is not installed');
      return;
    }
    const { Agent, fetch: ufetch } = await import('undici');
    const s = await startServer({ args: ['--tls-cert', `${dir}/cert.pem`, '--tls-key', `${dir}/key.pem`] });
    try {
      assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const dispatcher = new Agent({ connect: { ca: readFileSync(`${dir}/cert.pem`) } });
      const msg = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta() } };
      const r = await ufetch(s.url, { method: 'POST', headers: modernHeaders(msg, s.token), body: JSON.stringify(msg), dispatcher });
      assert.equal(r.status, 200);
      assert.equal((await r.json()).result.tools.length, TOOL_NAMES.length);
      await assert.rejects(fetch(s.url.replace('https:', 'http:'), { method: 'POST', body: '{}' }));
    } finally {
      await s.stop();
    }
  });
});

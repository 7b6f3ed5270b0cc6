// Shared helpers for the `sagebox mcp --http` tests: start a server on a
// free loopback port (its URL read from its stderr), tokens, raw requests
// with the 2026-07-28 headers; process checks come from tests/lib/procs.mjs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';

import { BIN, sleep } from '../lib/procs.mjs';

export {
  BIN, TOOL_NAMES, sleep, textOf, processesWith, waitFor, uniqueMarker, markedSleep, jobEnded,
} from '../lib/procs.mjs';
export const MODERN = '2026-07-28';

// Removed when the test file's process exits (each of them left its state,
// token and audit directories in /tmp before).
const made = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export function tempDir(tag) {
  const d = mkdtempSync(path.join(tmpdir(), `sagebox-http-${tag}-`));
  made.push(d);
  return d;
}

// A token file with one line per client: {name: token}.
export function tokenFile(tokens) {
  const dir = tempDir('tokens');
  const file = path.join(dir, 'tokens');
  writeFileSync(file, Object.entries(tokens).map(([n, t]) => `${n}:${t}\n`).join(''), { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

// `sagebox mcp --http 127.0.0.1:0 ...`: resolves with {url, proc, stderr(), stop()}.
export async function startServer({ args = [], env = {}, listen = '127.0.0.1:0' } = {}) {
  const state = tempDir('state');
  const proc = spawn(BIN, ['mcp', '--http', listen, ...args], {
    env: { ...process.env, XDG_STATE_HOME: state, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr.on('data', (d) => (err += d.toString()));
  proc.stdout.on('data', (d) => (err += d.toString()));
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const end = Date.now() + 20000;
  // The banner is several writes to stderr: wait for its token line (or
  // the line that says there is none) too, not only the first line; under
  // load the first can arrive alone (CI once sent "Bearer undefined").
  let url;
  while (!url) {
    const m = err.match(/serving MCP over HTTP at (\S+)/);
    if (m && /token: in \S+|no token:/.test(err)) url = m[1];
    else if (proc.exitCode !== null || Date.now() > end) throw new Error(`server did not start:\n${err}`);
    else await sleep(50);
  }
  const tokenPath = err.match(/token: in (\S+)/)?.[1];
  const token = tokenPath && !args.includes('--token-file') ? readFileSync(tokenPath, 'utf8').trim() : undefined;
  return {
    url,
    proc,
    token,
    pid: proc.pid,
    stderr: () => err,
    exited,
    async stop() {
      // SIGINT: at once (SIGTERM drains first: tests/scale).
      if (proc.exitCode === null) proc.kill('SIGINT');
      const r = await exited;
      assert.doesNotMatch(err, /ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:/, err);
      return r;
    },
  };
}

// The options of an SDK client's HTTP transport (v1 and v2) that send token.
export const bearer = (token) => ({ requestInit: { headers: { Authorization: `Bearer ${token}` } } });

// An official SDK client connected to url with token: v1 in the handshake
// era, else v2 pinned to 2026-07-28 (its capabilities sent per request).
export async function sdkClient(url, { name, token, v1 = false, capabilities } = {}) {
  const opts = capabilities ? { capabilities } : {};
  const client = v1 ? new ClientV1({ name, version: '1' }, opts)
    : new ClientV2({ name, version: '1' }, { ...opts, versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(v1 ? new HttpV1(new URL(url), bearer(token)) : new HttpV2(new URL(url), bearer(token)));
  return client;
}

// The two protocol eras a suite runs its tests in, each with its
// connect(url, token, capabilities); label names the clients.
export function sdkEras(label) {
  return [
    {
      name: 'SDK v1, handshake era (2025-11-25)',
      connect: (url, token, capabilities) => sdkClient(url, { name: `sagebox-${label}-v1`, token, v1: true, capabilities }),
    },
    {
      name: 'SDK v2, per-request capabilities (2026-07-28)',
      connect: (url, token, capabilities) => sdkClient(url, { name: `sagebox-${label}-v2`, token, capabilities }),
    },
  ];
}

export function meta(extra = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'sagebox-http-tests', version: '1' },
    ...extra,
  };
}

// The standard headers of a 2026-07-28 POST for msg.
export function modernHeaders(msg, token, extra = {}) {
  const h = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': msg.method,
  };
  if (msg.params?.name) h['Mcp-Name'] = msg.params.name;
  // As a conforming client does for the arguments sagebox marks with
  // x-mcp-header (a test that sends others gives them in extra).
  const args = msg.method === 'tools/call' ? msg.params?.arguments || {} : {};
  if (typeof args.session_id === 'string') h['Mcp-Param-Session-Id'] = args.session_id;
  if (typeof args.job_id === 'string') h['Mcp-Param-Job-Id'] = args.job_id;
  Object.assign(h, extra);
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

// Read an SSE or JSON answer: {status, headers, messages: [...]}.
export async function readAnswer(res) {
  const type = res.headers.get('content-type') || '';
  const text = await res.text();
  let messages = [];
  if (type.includes('text/event-stream')) {
    for (const block of text.split('\n\n'))
      for (const line of block.split('\n'))
        if (line.startsWith('data: ')) messages.push(JSON.parse(line.slice(6)));
  } else if (text) {
    messages = [JSON.parse(text)];
  }
  return { status: res.status, headers: res.headers, messages, text };
}

let nextId = 1;
// POST one modern request; resolves with readAnswer's result and .answer (the response).
export async function modern(url, token, method, params = {}, { headers = {}, signal, id } = {}) {
  const msg = { jsonrpc: '2.0', id: id ?? nextId++, method, params: { ...params, _meta: { ...meta(), ...(params._meta || {}) } } };
  const res = await fetch(url, { method: 'POST', headers: modernHeaders(msg, token, headers), body: JSON.stringify(msg), signal });
  const a = await readAnswer(res);
  a.answer = a.messages.find((m) => m.id === msg.id && !m.method);
  return a;
}

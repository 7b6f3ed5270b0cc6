// Shared helpers for the `sagebox mcp` tests: an SDK client over stdio, a
// raw line-level client, and (from tests/lib/procs.mjs) where the binary is
// and process checks.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { BIN, sleep } from '../lib/procs.mjs';

export {
  BIN, TOOL_NAMES, sleep, textOf, processesWith, waitFor, waitGone, waitPresent, uniqueMarker, markedSleep,
} from '../lib/procs.mjs';
export const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
export const LATEST = '2025-11-25';

export function serverEnv(extra = {}) {
  return { ...process.env, ...extra };
}

// A connected SDK client. `stderr` collects the server's stderr.
export async function sdkClient({ args = [], env = {}, capabilities = {} } = {}) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['mcp', ...args],
    env: serverEnv(env),
    stderr: 'pipe',
  });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(d.toString()));
  const client = new Client({ name: 'sagebox-tests', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, transport, stderr, pid: transport.pid };
}

// A connected SDK client of any command a host would start (tests/docs:
// the entries the user pages show), with exactly the environment given.
export async function stdioClient({ command, args = [], env = {} }) {
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(d.toString()));
  const client = new Client({ name: 'sagebox-docs-tests', version: '1.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport);
  } catch (e) {
    e.message += `; the server's stderr: ${stderr.join('')}`;
    throw e;
  }
  return { client, transport, stderr, pid: transport.pid };
}

// Close an SDK client and check the server's stderr for sanitizer reports
// (the suite also runs against ASan/UBSan/TSan builds).
export async function closeClient(c) {
  await c.client.close();
  await sleep(100);
  const err = c.stderr.join('');
  assert.doesNotMatch(err, /ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|runtime error:/, err);
}

// A raw client: writes lines (or bytes) and reads every line the server
// writes, asserting each is one JSON-RPC 2.0 object (nothing else may ever
// appear on stdout).
export class RawServer {
  constructor({ args = [], env = {} } = {}) {
    this.proc = spawn(BIN, ['mcp', ...args], { env: serverEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    this.messages = [];
    this.waiters = [];
    this.stderr = '';
    this.badLines = [];
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
    let buf = '';
    this.proc.stdout.setEncoding('utf8');
    this.proc.stdout.on('data', (chunk) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          this.badLines.push(line);
          continue;
        }
        if (msg === null || typeof msg !== 'object' || Array.isArray(msg) || msg.jsonrpc !== '2.0') {
          this.badLines.push(line);
          continue;
        }
        this.messages.push(msg);
        this.waiters = this.waiters.filter((w) => !w(msg));
      }
    });
    this.proc.stderr.on('data', (d) => (this.stderr += d.toString()));
    this.proc.stdin.on('error', () => {});
  }

  get pid() {
    return this.proc.pid;
  }

  send(obj) {
    const line = typeof obj === 'string' || Buffer.isBuffer(obj) ? obj : JSON.stringify(obj);
    this.proc.stdin.write(line);
    this.proc.stdin.write('\n');
  }

  // Resolves with the first message (already received or future) matching pred.
  waitFor(pred, ms = 15000, what = 'a message') {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${this.stderr}`)), ms);
      this.waiters.push((msg) => {
        if (!pred(msg)) return false;
        clearTimeout(timer);
        resolve(msg);
        return true;
      });
    });
  }

  response(id, ms = 15000) {
    return this.waitFor((m) => 'id' in m && !('method' in m) && m.id === id, ms, `the response to id ${JSON.stringify(id)}`);
  }

  responses() {
    return this.messages.filter((m) => 'id' in m && !('method' in m));
  }

  notifications(method) {
    return this.messages.filter((m) => m.method === method);
  }

  async request(id, method, params, ms) {
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    this.send(msg);
    return this.response(id, ms);
  }

  async initialize(protocolVersion = '2025-06-18', id = 'init') {
    const res = await this.request(id, 'initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'raw-test', version: '1.0.0' },
    });
    assert.ok(res.result, `initialize failed: ${JSON.stringify(res)}`);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return res.result;
  }

  async close(ms = 15000) {
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), ms);
    const st = await this.exited;
    clearTimeout(timer);
    assert.deepEqual(this.badLines, [], 'the server wrote something that is not a JSON-RPC message to stdout');
    return st;
  }

  kill() {
    this.proc.kill('SIGKILL');
  }
}

export function vmHWMkB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

// Decode a PNG far enough to know it is one: dimensions from IHDR, and the
// zlib stream of the IDAT chunks inflating to height rows of the width's
// bytes (plus a filter byte each).
export function decodePng(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  let off = 8;
  let ihdr = null;
  const idat = [];
  let iend = false;
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') ihdr = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') iend = true;
    off += 12 + len;
  }
  assert.ok(ihdr && iend && idat.length, 'IHDR, IDAT and IEND chunks');
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const depth = ihdr[8];
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[ihdr[9]];
  assert.equal(ihdr[12], 0, 'not interlaced');
  const raw = inflateSync(Buffer.concat(idat));
  assert.equal(raw.length, height * (1 + Math.ceil((width * channels * depth) / 8)), 'image data size');
  return { width, height };
}

// Several `sagebox mcp --http` instances on loopback behind Debian's
// haproxy running docs/deploy/haproxy.cfg as shipped (its addresses from
// the environment it reads), scraped by Debian's prometheus; and the SDK
// clients v1 (handshake era) and v2 (2026-07-28) through the router.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, chmodSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';

import { BIN, sleep, waitFor } from '../lib/procs.mjs';

export { BIN, sleep, waitFor };
const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../..');
export const HAPROXY_CFG = path.join(ROOT, 'docs/deploy/haproxy.cfg');
export const MODERN = '2026-07-28';

const made = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
export function tempDir(tag) {
  const d = mkdtempSync(path.join(tmpdir(), `sagebox-scale-${tag}-`));
  made.push(d);
  return d;
}

// A free loopback port (bound and let go: an instance is restarted on the
// same port, as a pod keeps its name).
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// A token file: {name: token}.
export function tokenFile(dir, tokens) {
  const file = path.join(dir, 'tokens');
  writeFileSync(file, Object.entries(tokens).map(([n, t]) => `${n}:${t}\n`).join(''), { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

// One instance: `sagebox mcp --http 127.0.0.1:PORT --instance NAME`, its
// own state directory (token, control socket) and audit log.
export class Instance {
  constructor(name, port, { tokens, dir, args = [] }) {
    Object.assign(this, { name, port, tokens, args });
    this.state = path.join(dir, `state-${name}`);
    this.audit = path.join(dir, `audit-${name}.jsonl`);
    this.url = `http://127.0.0.1:${port}/mcp`;
    this.log = '';
  }

  env() {
    return { ...process.env, XDG_STATE_HOME: this.state };
  }

  async start() {
    this.log = '';
    this.proc = spawn(BIN, ['mcp', '--http', `127.0.0.1:${this.port}`, '--instance', this.name, '--token-file',
      this.tokens, '--audit-log', this.audit, ...this.args], { env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d) => (this.log += d.toString()));
    this.proc.stdout.on('data', (d) => (this.log += d.toString()));
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
    const up = await waitFor(() => /serving MCP over HTTP at/.test(this.log) || this.proc.exitCode !== null, 20000, 50);
    if (!up || this.proc.exitCode !== null) throw new Error(`instance ${this.name} did not start:\n${this.log}`);
  }

  // Its audit log's "finished" lines.
  calls() {
    if (!existsSync(this.audit)) return [];
    return readFileSync(this.audit, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
      .filter((l) => l.event === 'finished');
  }

  // `sagebox mcp --drain --instance NAME`: returns once the server stopped.
  drain() {
    return new Promise((resolve, reject) => {
      const p = spawn(BIN, ['mcp', '--drain', '--instance', this.name], { env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (out += d));
      p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`--drain failed (${code}): ${out}`))));
    });
  }

  async stop(signal = 'SIGINT') {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    if (this.exited) await this.exited;
  }
}

// Debian's haproxy with the shipped configuration.
export class Router {
  constructor(port, instances, dir) {
    Object.assign(this, { port, instances, dir });
    this.url = `http://127.0.0.1:${port}/mcp`;
    this.log = '';
  }

  env() {
    const env = { ...process.env, SAGEBOX_ROUTER_BIND: `127.0.0.1:${this.port}` };
    this.instances.forEach((inst, i) => (env[`SAGEBOX_${i}`] = `127.0.0.1:${inst.port}`));
    return env;
  }

  // `haproxy -c` on the shipped file: its output (stdout and stderr).
  check() {
    const r = spawnSync('haproxy', ['-c', '-f', HAPROXY_CFG], { env: this.env(), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`haproxy -c failed:\n${r.stdout}${r.stderr}`);
    return r.stdout + r.stderr;
  }

  async start() {
    this.proc = spawn('haproxy', ['-db', '-f', HAPROXY_CFG], { env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d) => (this.log += d.toString()));
    this.proc.stdout.on('data', (d) => (this.log += d.toString()));
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
    const up = await waitFor(async () => {
      try {
        await fetch(`http://127.0.0.1:${this.port}/health`);
        return true;
      } catch {
        return this.proc.exitCode !== null;
      }
    }, 10000, 100);
    if (!up || this.proc.exitCode !== null) throw new Error(`haproxy did not start:\n${this.log}`);
  }

  async stop() {
    if (this.proc && this.proc.exitCode === null) this.proc.kill('SIGTERM');
    if (this.exited) await this.exited;
  }
}

// Debian's prometheus scraping every instance's /metrics each second (the
// token as a credentials file).
export class Prometheus {
  constructor(port, instances, dir, token) {
    Object.assign(this, { port, instances, dir });
    this.tokenFile = path.join(dir, 'prometheus-token');
    writeFileSync(this.tokenFile, token, { mode: 0o600 });
    this.log = '';
  }

  async start() {
    const cfg = path.join(this.dir, 'prometheus.yml');
    const targets = this.instances.map((i) => `'127.0.0.1:${i.port}'`).join(', ');
    writeFileSync(cfg, `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n` +
      `  - job_name: sagebox\n    metrics_path: /metrics\n    authorization:\n` +
      `      credentials_file: ${this.tokenFile}\n    static_configs:\n      - targets: [${targets}]\n`);
    this.proc = spawn('prometheus', [`--config.file=${cfg}`, `--storage.tsdb.path=${path.join(this.dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${this.port}`, '--log.level=warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d) => (this.log += d.toString()));
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
    const up = await waitFor(async () => {
      try {
        return (await fetch(`http://127.0.0.1:${this.port}/-/ready`)).ok;
      } catch {
        return false;
      }
    }, 30000, 200);
    if (!up) throw new Error(`prometheus did not start:\n${this.log}`);
  }

  // An instant query through the HTTP API: [{metric, value}].
  async query(q) {
    const r = await fetch(`http://127.0.0.1:${this.port}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = await r.json();
    if (body.status !== 'success') throw new Error(`prometheus query ${q}: ${JSON.stringify(body)}`);
    return body.data.result.map((x) => ({ metric: x.metric, value: Number(x.value[1]) }));
  }

  // Its targets' health: {instance address: 'up' | 'down' | ...}.
  async targets() {
    const r = await (await fetch(`http://127.0.0.1:${this.port}/api/v1/targets`)).json();
    return Object.fromEntries(r.data.activeTargets.map((t) => [t.labels.instance, t.health]));
  }

  async stop() {
    if (this.proc && this.proc.exitCode === null) this.proc.kill('SIGTERM');
    if (this.exited) await this.exited;
  }
}

// An SDK client through the router: v1 (handshake era, 2025-11-25) or v2
// pinned to 2026-07-28 (its calls carry Mcp-Param-Session-Id).
export async function connect(url, token, era, name) {
  const opts = { requestInit: { headers: { Authorization: `Bearer ${token}` } } };
  if (era === 'v1') {
    const client = new ClientV1({ name, version: '1' });
    await client.connect(new HttpV1(new URL(url), opts));
    return client;
  }
  const client = new ClientV2({ name, version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new HttpV2(new URL(url), opts));
  return client;
}

export function textOf(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// The instance a handle names (KIND_INSTANCE_SECRET).
export function instanceOf(handle) {
  const m = /^[smj]_([a-z0-9-]{1,32})_[0-9a-f]{32}$/.exec(handle || '');
  return m ? m[1] : null;
}

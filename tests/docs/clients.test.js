// Every MCP host entry the README and the user guide show (LM Studio, Claude
// Desktop and Gemini CLI's "mcpServers", VS Code's "servers", Claude Code's
// `claude mcp add ... -- COMMAND ARGS`, Goose's `cmd` and `args`) is started
// the way a host starts it: its command, its arguments and its environment,
// through the official SDK's stdio client. It must answer tools/list and run
// Sage. The command the pages give is the installed path (/usr/bin/sagebox
// or /usr/local/bin/sagebox); the binary under test stands in for it. The
// hosts themselves are not run here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { BIN, stdioClient, closeClient, textOf } from '../mcp/helpers.js';
import { USER_PAGES, blocks } from './pages.js';

const INSTALLED = ['/usr/bin/sagebox', '/usr/local/bin/sagebox'];
const FACTOR = 'R.<x> = QQ[]\nprint(factor(x^4 - 1))';

// The stdio entries of one block: [{host, command, args, env}].
function entries(b) {
  const out = [];
  const text = b.body.join('\n');
  if (b.info[0] === 'json') {
    const doc = JSON.parse(text);
    for (const [key, host] of [['mcpServers', 'mcpServers'], ['servers', 'VS Code servers']]) {
      for (const [name, e] of Object.entries(doc[key] || {})) {
        if (e.command) out.push({ host: `${host}.${name}`, command: e.command, args: e.args || [], env: e.env || {} });
      }
    }
  } else if (b.info[0] === 'sh') {
    for (const line of b.body) {
      const m = /^claude mcp add .*? -- (.+)$/.exec(line.replace(/\s+#.*$/, ''));
      if (m) {
        const [command, ...args] = m[1].trim().split(/\s+/);
        out.push({ host: 'Claude Code', command, args, env: {} });
      }
    }
  } else if (b.info[0] === 'yaml') {
    const cmd = /^\s*cmd:\s*(\S+)\s*$/m.exec(text);
    const args = /^\s*args:\s*\[(.*)\]\s*$/m.exec(text);
    if (cmd) {
      out.push({
        host: 'Goose', command: cmd[1],
        args: args ? args[1].split(',').map((s) => s.trim().replace(/^["']|["']$/g, '')).filter(Boolean) : [],
        env: {},
      });
    }
  }
  return out.map((e) => ({ ...e, page: b.page, line: b.line }));
}

const found = USER_PAGES.flatMap(blocks).flatMap(entries);

test('the user pages show an entry for each host', () => {
  for (const page of USER_PAGES) {
    const hosts = found.filter((e) => e.page === page).map((e) => e.host.split('.')[0]);
    for (const h of ['mcpServers', 'VS Code servers', 'Claude Code', 'Goose']) {
      assert.ok(hosts.includes(h), `${page}: no ${h} entry found (found: ${hosts.join(', ')})`);
    }
  }
});

for (const e of found) {
  test(`${e.page}:${e.line}: the ${e.host} entry starts a server that runs Sage`, { timeout: 300000 }, async () => {
    assert.ok(INSTALLED.includes(e.command),
      `${e.page}:${e.line}: the command ${e.command} is not where the package or meson install puts sagebox`);
    const tmp = mkdtempSync(path.join(tmpdir(), 'sagebox-docs-'));
    try {
      const base = {};
      for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SAGEBOX_')) base[k] = v;
      // a path under the example's home goes under this test's own
      const env = { ...base, HOME: tmp };
      for (const [k, v] of Object.entries(e.env)) env[k] = v.replace(/^\/home\/[^/]+/, tmp);
      const c = await stdioClient({ command: BIN, args: e.args, env });
      try {
        const tools = (await c.client.listTools()).tools.map((t) => t.name);
        assert.ok(tools.includes('run_sagemath'), `tools/list: ${tools.join(', ')}`);
        const r = await c.client.callTool({ name: 'run_sagemath', arguments: { code: FACTOR } }, undefined,
          { timeout: 240000 });
        assert.equal(r.isError, false, textOf(r));
        assert.match(textOf(r), /\(x - 1\) \* \(x \+ 1\) \* \(x\^2 \+ 1\)/);
      } finally {
        await closeClient(c);
      }
      for (const [k, v] of Object.entries(env)) {
        if (k === 'SAGEBOX_AUDIT_LOG') {
          assert.ok(existsSync(v), `${k}: no log at ${v}`);
          assert.match(readFileSync(v, 'utf8'), /"finished"/, `${k}: the call is not in ${v}`);
        }
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
}

// Smoke test with the MCP Inspector's CLI mode (installed by `npm ci` as a
// dev dependency; it spawns the server itself, over stdio).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { BIN, serverEnv, TOOL_NAMES } from './helpers.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const inspector = path.join(here, 'node_modules/.bin/mcp-inspector');

const skip = existsSync(inspector) ? false : 'the Inspector is not installed (run npm ci)';

async function inspect(...args) {
  const { stdout } = await run(inspector, ['--cli', BIN, 'mcp', ...args], { env: serverEnv(), timeout: 120000 });
  return JSON.parse(stdout);
}

test('inspector --cli: tools/list', { skip, timeout: 120000 }, async () => {
  const out = await inspect('--method', 'tools/list');
  assert.deepEqual(out.tools.map((t) => t.name).sort(), TOOL_NAMES);
});

test('inspector --cli: tools/call run_sagemath', { skip, timeout: 180000 }, async () => {
  const out = await inspect('--method', 'tools/call', '--tool-name', 'run_sagemath', '--tool-arg', 'code=print(factor(2^64 - 1))');
  assert.equal(out.isError, false, JSON.stringify(out));
  assert.match(out.content[0].text, /^3 \* 5 \* 17 \* 257 \* 641 \* 65537 \* 6700417\n/);
});

// The viewer's vendored libraries (src/mcp/viewer/vendor/): the committed
// files are exactly what the npm packages pinned in its package-lock.json
// make (npm ci checks each tarball's sha512; scripts/vendor-viewer --check
// remakes the files and compares), each has its licence beside it and in
// the page sagebox serves, and no release older than the fix of a known
// advisory is vendored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { BIN } from './harness.js';

const top = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const vendor = path.join(top, 'src/mcp/viewer/vendor');

// The first release of each library with the fix for its latest known
// advisory: vendoring anything older is a regression.
const FIXED_IN = {
  katex: ['0.16.21', 'GHSA-cg87-wmx4-v546 (\\htmlData); 0.16.10: CVE-2024-28243 (\\edef past maxExpand) and three more'],
  dompurify: ['3.2.4', 'CVE-2025-26791 (template literals with SAFE_FOR_TEMPLATES)'],
  three: ['0.125.0', 'CVE-2020-28496 (ReDoS in the colour parser)'],
};

const newer = (a, b) => {
  const x = a.split('.').map(Number), y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
  return true;
};

test('the committed vendored files are what the locked npm packages make', { timeout: 300000 }, async () => {
  const { stdout } = await promisify(execFile)(path.join(top, 'scripts/vendor-viewer'), ['--check'], { timeout: 280000 });
  assert.match(stdout, /the committed files are the locked packages'/);
});

test('each vendored library: pinned, its licence beside it and in the page, no release with a known advisory', async () => {
  const pinned = JSON.parse(readFileSync(path.join(vendor, 'package.json'), 'utf8')).dependencies;
  const lock = JSON.parse(readFileSync(path.join(vendor, 'package-lock.json'), 'utf8')).packages;
  const versions = Object.fromEntries(readFileSync(path.join(vendor, 'VERSIONS'), 'utf8').trim().split('\n').map((l) => l.split(' ')));
  const client = new Client({ name: 'sagebox-vendor-test', version: '1' },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } });
  await client.connect(new StdioClientTransport({ command: BIN, args: ['mcp'], env: process.env, stderr: 'inherit' }));
  const page = (await client.readResource({ uri: 'ui://sagebox/viewer' })).contents[0].text;
  await client.close();
  for (const [name, [fixed, advisory]] of Object.entries(FIXED_IN)) {
    assert.match(pinned[name], /^\d+\.\d+\.\d+$/, `${name} is pinned to one version`);
    assert.equal(lock[`node_modules/${name}`].version, pinned[name]);
    assert.match(lock[`node_modules/${name}`].integrity, /^sha512-/, `${name}'s tarball hash is locked`);
    assert.equal(versions[name], pinned[name], `vendor/VERSIONS names ${name} ${pinned[name]}`);
    assert.ok(newer(pinned[name], fixed), `${name} ${pinned[name]} predates ${fixed}, which fixed ${advisory}`);
    const licence = readFileSync(path.join(vendor, `LICENSE.${name}`), 'utf8');
    assert.match(licence, /License|LICENSE/);
    assert.ok(page.includes(licence.trim()), `the served page carries ${name}'s licence`);
  }
  assert.match(page, new RegExp(`katex ${pinned.katex}, three ${pinned.three}, dompurify ${pinned.dompurify}`));
});

// Named workspaces over HTTP: each token is a client of its own, and a
// workspace belongs to the one that made it. Alice (an official SDK client
// v1) keeps a workspace `thesis`; Bob (v2, 2026-07-28) cannot list it, open
// it or guess it: his `thesis` is his own, empty one, opened while Alice
// has hers; no tool deletes a workspace; the local user's project folder is
// never bound for a token's session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

import { sdkClient, startServer, tokenFile, tempDir, textOf } from './helpers.js';

const LONG = 180000;
const tokens = { alice: randomBytes(24).toString('hex'), bob: randomBytes(24).toString('hex') };

async function connect(url, name, v1) {
  const client = await sdkClient(url, { name: `ws-${name}`, token: tokens[name], v1 });
  const call = async (tool, args = {}) => {
    const r = v1 ? await client.callTool({ name: tool, arguments: args }, undefined, { timeout: LONG })
      : await client.callTool({ name: tool, arguments: args }, { timeout: LONG });
    return { r, text: textOf(r), s: r.structuredContent };
  };
  const ok = async (tool, args = {}) => {
    const out = await call(tool, args);
    assert.equal(out.r.isError, false, `${name} ${tool}: ${out.text}`);
    return out;
  };
  return { name, client, call, ok };
}

test('a workspace is its token\'s: another cannot list, open or guess it', { timeout: 600000 }, async () => {
  const data = tempDir('data');
  const project = tempDir('project');
  const s = await startServer({ args: ['--token-file', tokenFile(tokens), '--project-dir', project],
    env: { XDG_DATA_HOME: data } });
  const alice = await connect(s.url, 'alice', true);
  const bob = await connect(s.url, 'bob', false);
  try {
    assert.match(s.stderr(), /project_dir is the local user's folder/);
    const a = (await alice.ok('session_open', { lang: 'python', workspace: 'thesis' })).s.session_id;
    await alice.ok('run_python', { session_id: a, code: "open('/work/secret.txt', 'w').write('alice only')\nx = 42" });
    await alice.ok('session_save', { session_id: a });

    // Bob sees none of it, and his `thesis` is another workspace: empty,
    // opened while Alice's is open, without her variables.
    const list = await bob.ok('workspace_list', {});
    assert.deepEqual(list.s.workspaces, [], list.text);
    assert.equal((await alice.ok('workspace_list', {})).s.workspaces.map((w) => w.name).join(), 'thesis');
    const b = (await bob.ok('session_open', { lang: 'python', workspace: 'thesis', restore: true }));
    assert.match(b.text, /new workspace thesis/);
    assert.match(b.text, /no saved state/);
    const bid = b.s.session_id;
    const seen = await bob.ok('run_python', { session_id: bid,
      code: "import os\nprint(sorted(os.listdir('/work')), 'x' in globals(), os.path.exists('/work/project'))" });
    assert.equal(seen.s.stdout.trim(), "[] False False");
    // no name leads into Alice's: the names are checked, paths refused
    for (const name of ['../token-alice/thesis', '..', '/thesis', 'thesis/../x']) {
      const out = await bob.call('session_open', { lang: 'python', workspace: name });
      assert.ok(out.r.isError && /invalid workspace name|must be|at most/.test(out.text), `${name}: ${out.text}`);
    }
    // a valid name is looked up under Bob's own directory: `token-alice` is his, new
    const guess = await bob.ok('session_open', { lang: 'python', workspace: 'token-alice' });
    assert.match(guess.text, /new workspace token-alice/);
    assert.doesNotMatch(guess.text, /Restored/);
    await bob.ok('session_close', { session_id: guess.s.session_id });
    // Alice's session id is unknown to Bob
    const steal = await bob.call('session_save', { session_id: a });
    assert.ok(steal.r.isError && /unknown session/.test(steal.text), steal.text);
    // no tool deletes, exports or imports a workspace
    const names = (await bob.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('workspace_list') && names.includes('session_save'));
    assert.ok(!names.some((n) => /^workspace_(rm|remove|delete|export|import)/.test(n)), names.join());
    await bob.ok('session_close', { session_id: bid });
    await alice.ok('session_close', { session_id: a });

    // on disk: one directory per token
    const root = path.join(data, 'sagebox', 'workspaces');
    assert.deepEqual(readdirSync(root).sort(), ['token-alice', 'token-bob']);
    assert.ok(existsSync(path.join(root, 'token-alice', 'thesis', 'files', 'secret.txt')));
    assert.ok(!existsSync(path.join(root, 'token-bob', 'thesis', 'files', 'secret.txt')));
  } finally {
    await alice.client.close();
    await bob.client.close();
    await s.stop();
  }
});

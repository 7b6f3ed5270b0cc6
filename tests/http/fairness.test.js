// Max_concurrent job slots are shared fairly between
// clients (tokens). One client's long calls must not freeze another's
// short one: with several tokens no client may hold every slot, and a call
// that waits for its session's turn holds none. Alice and Bob, each an
// official SDK client with its own token, against one server with the
// default max_concurrent (4): Bob's print('bob') is answered within a small
// bound while Alice keeps four 15 s calls queued on her session, and while
// she runs four 15 s stateless calls. Before the fix Bob waited ~15 s.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { startServer, tokenFile, bearer, textOf, uniqueMarker, processesWith, waitFor } from './helpers.js';
import { waitGone } from '../lib/procs.mjs';

const LONG = 180000;
const tokens = { alice: randomBytes(24).toString('hex'), bob: randomBytes(24).toString('hex') };

async function connect(url, name) {
  const client = new Client({ name: `fair-${name}`, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), bearer(tokens[name])));
  const call = async (tool, args = {}) => {
    const r = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: LONG });
    return { r, text: textOf(r), s: r.structuredContent };
  };
  return { name, client, call };
}

// Bob's print('bob'): its answer and how long it took (ms).
async function bobPrints(bob) {
  const t0 = Date.now();
  const out = await bob.call('run_python', { code: "print('bob')" });
  assert.equal(out.r.isError, false, out.text);
  assert.match(out.text, /bob/);
  return Date.now() - t0;
}

describe('fair share of max_concurrent between clients', { timeout: 600000 }, () => {
  let s, alice, bob, alone;
  before(async () => {
    s = await startServer({ args: ['--token-file', tokenFile(tokens)] });
    alice = await connect(s.url, 'alice');
    bob = await connect(s.url, 'bob');
    await bobPrints(bob); // warm: the first sandbox of a kind may start slower
    alone = await bobPrints(bob);
  });
  after(async () => {
    await alice?.client.close();
    await bob?.client.close();
    const r = await s.stop();
    assert.equal(r.code, 0, s.stderr());
  });

  test('four 15 s calls queued on one client\'s session do not delay another client', { timeout: LONG }, async () => {
    const open = await alice.call('session_open', { lang: 'shell' });
    assert.equal(open.r.isError, false, open.text);
    const sid = open.s.session_id;
    const marker = uniqueMarker('fair-session');
    const calls = [0, 1, 2, 3].map(() => alice.call('run_shell', { session_id: sid, code: `sh -c 'sleep 15; true' ${marker}` })
      .catch((e) => e));
    assert.ok(await waitFor(() => processesWith(marker).length > 0, 30000), 'alice\'s first call runs');
    const took = await bobPrints(bob);
    assert.ok(took < alone + 5000, `bob waited ${took} ms (alone: ${alone} ms) behind alice's session calls`);
    await alice.call('session_close', { session_id: sid });
    await Promise.all(calls);
    assert.deepEqual(await waitGone(marker, 15000), []);
  });

  test('four 15 s stateless calls of one client leave a slot for another', { timeout: LONG }, async () => {
    const marker = uniqueMarker('fair-stateless');
    const calls = [0, 1, 2, 3].map(() => alice.call('run_shell', { code: `sh -c 'sleep 15; true' ${marker}` }));
    // Three run; the fourth waits (with two tokens one client may hold at most max_concurrent - 1).
    assert.ok(await waitFor(() => processesWith(marker).length >= 3, 30000), 'alice\'s calls run');
    const took = await bobPrints(bob);
    assert.ok(took < alone + 5000, `bob waited ${took} ms (alone: ${alone} ms) behind alice's stateless calls`);
    for (const out of await Promise.all(calls)) assert.equal(out.r.isError, false, out.text);
  });
});

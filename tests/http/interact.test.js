// Sage's @interact over MCP, with the official SDK clients in both
// protocol eras: a session's call displays an "interact" item (its
// controls and its first rendering); interact_update, the viewer's tool,
// is listed with _meta.ui.visibility ["app"] only to a client that
// declared the MCP Apps extension and refused to one that did not; it runs
// the function again in its session (the state it sets is the session's),
// and refuses, with nothing run, values outside the controls, an id the
// session does not have, another client's session and a closed one. Its
// audit lines name the session and the interact.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { startServer, tokenFile, textOf, tempDir, sdkEras } from './helpers.js';

const UI = 'io.modelcontextprotocol/ui';
const WITH_UI = { extensions: { [UI]: { mimeTypes: ['text/html;profile=mcp-app'] } } };
const ALICE = 'token-alice-interact-1234567890';
const BOB = 'token-bob-interact-1234567890';
const LONG = 180000;

const eras = sdkEras('interact');

const call = (c, name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: LONG });

async function ok(c, name, args) {
  const r = await call(c, name, args);
  assert.equal(r.isError, false, `${name}: ${textOf(r)}`);
  return r;
}

// A refusal: a JSON-RPC error or a tool error; its message.
async function refusal(c, name, args) {
  try {
    const r = await call(c, name, args);
    assert.equal(r.isError, true, `${name} should be refused: ${textOf(r)}`);
    return textOf(r);
  } catch (e) {
    return e.message;
  }
}

const CELL = `
runs = 0
@interact
def _(n=slider(1, 20, 1, default=5), f=selector(['sin', 'cos'])):
    global runs, last
    runs += 1
    last = (n, f)
    print("n=%s f=%s" % (n, f))
    show(plot(eval(f)(n*x), (x, 0, 2*pi)))
`;

for (const era of eras) {
  describe(era.name, { timeout: 600000 }, () => {
    let s, plain, apps, bob, audit;
    before(async () => {
      audit = path.join(tempDir('audit'), 'audit.jsonl');
      s = await startServer({ args: ['--token-file', tokenFile({ alice: ALICE, bob: BOB }), '--audit-log', audit] });
      plain = await era.connect(s.url, ALICE, {});
      apps = await era.connect(s.url, ALICE, WITH_UI);
      bob = await era.connect(s.url, BOB, WITH_UI);
    });
    after(async () => {
      for (const c of [plain, apps, bob]) await c?.close();
      await s?.stop();
    });

    test('interact_update is the app\'s: listed only with the extension, hidden from the model', async () => {
      const withUi = (await apps.listTools()).tools.find((t) => t.name === 'interact_update');
      assert.ok(withUi, 'listed for a client with the extension');
      assert.deepEqual(withUi._meta?.ui?.visibility, ['app']);
      assert.deepEqual(Object.keys(withUi.inputSchema.properties).sort(), ['interact_id', 'session_id', 'values']);
      assert.equal(withUi.inputSchema.properties.values.type, 'object');
      const names = (await plain.listTools()).tools.map((t) => t.name);
      assert.ok(!names.includes('interact_update'), 'not listed without the extension');
    });

    test('a session\'s interact: its item, then moves that run it again in the session', async () => {
      const sid = (await ok(apps, 'session_open', { lang: 'sage' })).structuredContent.session_id;
      const r = await ok(apps, 'run_sagemath', { code: CELL, session_id: sid });
      const items = r.structuredContent.display;
      assert.equal(items.length, 1, JSON.stringify(items));
      const it = items[0];
      assert.equal(it.kind, 'interact');
      assert.match(it.id, /^i[0-9a-f]{16}$/);
      assert.equal(it.session_id, sid);
      assert.deepEqual(it.controls.map((c) => [c.name, c.type, c.default]), [['n', 'slider', 5], ['f', 'selector', 0]]);
      assert.deepEqual(it.items.map((x) => x.kind), ['text', 'png']);
      assert.equal(it.items[0].text, 'n=5 f=sin');
      // the model reads what the controls are
      assert.match(textOf(r), /interact .*n: slider 1\.\.20 step 1, f: selector sin\|cos/);

      const moved = await ok(apps, 'interact_update', { session_id: sid, interact_id: it.id, values: { n: 7, f: 1 } });
      assert.equal(moved.structuredContent.interact_id, it.id);
      assert.equal(moved.structuredContent.stdout, 'n=7 f=cos\n');
      assert.deepEqual(moved.structuredContent.display.map((x) => x.kind), ['text', 'png']);
      assert.ok(moved.content.some((b) => b.type === 'image'), 'its plot');
      // the state it set is the session's
      const seen = await ok(apps, 'run_sagemath', { code: 'print(runs, last)', session_id: sid });
      assert.equal(seen.structuredContent.stdout, '2 (7, \'cos\')\n');

      // refused, each with a clear message, and nothing run
      const bad = [
        [{ session_id: sid, interact_id: it.id, values: { n: 21 } }, /control "n" \(slider 1\.\.20 step 1\): 21 is outside 1\.\.20; nothing was run/],
        [{ session_id: sid, interact_id: it.id, values: { n: 2.5 } }, /not on its steps of 1/],
        [{ session_id: sid, interact_id: it.id, values: { f: 'cos' } }, /control "f" \(selector sin\|cos\): must be an index from 0 to 1/],
        [{ session_id: sid, interact_id: it.id, values: { n: '__import__("os").system("id")' } }, /must be a number/],
        [{ session_id: sid, interact_id: it.id, values: { g: 1 } }, /has no control "g" \(its controls: n, f\)/],
        [{ session_id: sid, interact_id: 'i0123456789abcdef', values: {} }, new RegExp(`session ${sid} has no interact i0123456789abcdef; nothing was run`)],
        [{ session_id: sid, interact_id: 'runs += 1', values: {} }, /is not an interact's id/],
      ];
      for (const [args, re] of bad) assert.match(await refusal(apps, 'interact_update', args), re);
      // without the extension, even its owner cannot call it
      const msg = await refusal(plain, 'interact_update', { session_id: sid, interact_id: it.id, values: { n: 3 } });
      assert.match(msg, /interact_update is the sagebox viewer's tool.*did not declare the io\.modelcontextprotocol\/ui extension/);
      // another client's session is unknown to it, as one that never was
      const other = await refusal(bob, 'interact_update', { session_id: sid, interact_id: it.id, values: { n: 3 } });
      const never = await refusal(bob, 'interact_update', { session_id: `s_${'0'.repeat(32)}`, interact_id: it.id, values: { n: 3 } });
      assert.equal(other.replaceAll(sid, 'S'), never.replaceAll(`s_${'0'.repeat(32)}`, 'S'));
      assert.match(other, /unknown session/);
      const still = await ok(apps, 'run_sagemath', { code: 'print(runs)', session_id: sid });
      assert.equal(still.structuredContent.stdout, '2\n', 'none of the refused calls ran the function');

      // a reset forgets it; a closed session says so
      await ok(apps, 'session_reset', { session_id: sid });
      assert.match(await refusal(apps, 'interact_update', { session_id: sid, interact_id: it.id, values: {} }),
        new RegExp(`session ${sid} has no interact ${it.id}`));
      await ok(apps, 'session_close', { session_id: sid });
      assert.match(await refusal(apps, 'interact_update', { session_id: sid, interact_id: it.id, values: {} }),
        /closed|ended/);

      // the audit log ties the moves to the session and the interact: the
      // one that ran and each refusal (another client's calls are its own)
      const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
        .filter((l) => l.tool === 'interact_update' && l.event === 'finished' && l.interact === it.id);
      const alices = lines.filter((l) => l.client === 'alice');
      assert.ok(alices.every((l) => l.session === sid && /^[0-9a-f]{64}$/.test(l.code_sha256)),
        JSON.stringify(alices));
      assert.equal(alices.filter((l) => l.ok).length, 1, 'one move ran');
      assert.ok(alices.some((l) => !l.ok && /21 is outside 1\.\.20; nothing was run/.test(l.verdict)));
      assert.ok(lines.some((l) => l.client === 'bob' && !l.ok && l.session === sid));
    });

    test('a stateless call shows the first rendering and says the controls need a session', async () => {
      const r = await ok(apps, 'run_sagemath', { code: CELL });
      const [it] = r.structuredContent.display;
      assert.equal(it.kind, 'interact');
      assert.equal(it.session_id, undefined);
      assert.match(it.note, /need a session/);
      assert.deepEqual(it.items.map((x) => x.kind), ['text', 'png']);
    });
  });
}

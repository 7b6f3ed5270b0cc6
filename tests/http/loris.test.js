// Connections that never show a token must not starve
// a client that has one. The attack: 270 plain TCP connections (more than
// the 256 connection slots) that each send a request line and a Host
// header, then a byte a second, and reconnect whenever they are cut. Before,
// they held every slot before any token was checked, and a client with a
// valid token polling tools/list got 0-1 answers of 30. Now the gate holds
// them (no thread, no slot) until their headers are in: the legitimate
// client, an official SDK client that connects during the attack, must get
// at least 90% of its polls answered within 5 s each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { startServer, bearer, sleep } from './helpers.js';

const ATTACKERS = 270;
const POLLS = 30;

// The slow attackers, on loopback, until stop() (bounded: ATTACKERS at once).
function slowAttack(port) {
  let on = true;
  const socks = new Set();
  let connects = 0;
  const one = () => {
    if (!on) return;
    connects++;
    const s = net.connect(port, '127.0.0.1');
    socks.add(s);
    let timer;
    s.on('connect', () => {
      s.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      timer = setInterval(() => s.write('a'), 1000);
    });
    s.on('error', () => {});
    s.on('close', () => {
      clearInterval(timer);
      socks.delete(s);
      setTimeout(one, 10); // reconnect when cut
    });
  };
  for (let i = 0; i < ATTACKERS; i++) one();
  return {
    connects: () => connects,
    open: () => socks.size,
    stop() {
      on = false;
      for (const s of socks) s.destroy();
    },
  };
}

test('270 slow connections without a token do not starve a client with one', { timeout: 180000 }, async (t) => {
  const s = await startServer();
  const attack = slowAttack(Number(new URL(s.url).port));
  let client, stopped;
  try {
    await sleep(3000); // every attacker connected and trickling
    client = new Client({ name: 'loris-victim', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(s.url), bearer(s.token)));
    let answered = 0;
    for (let i = 0; i < POLLS; i++) {
      const t0 = Date.now();
      try {
        const r = await client.listTools(undefined, { timeout: 5000 });
        if (r.tools.length > 0 && Date.now() - t0 < 5000) answered++;
      } catch {
        // not answered in time
      }
      await sleep(Math.max(0, 1000 - (Date.now() - t0)));
    }
    t.diagnostic(`answered ${answered} of ${POLLS}; attackers open ${attack.open()}, connects ${attack.connects()}`);
    assert.ok(attack.open() >= ATTACKERS * 0.9, `the attack kept its connections open (${attack.open()})`);
    assert.ok(answered >= POLLS * 0.9, `only ${answered} of ${POLLS} polls answered within 5 s during the attack`);
  } finally {
    attack.stop();
    await client?.close().catch(() => {});
    stopped = await s.stop(); // also when it failed: nothing is left running
  }
  assert.match(s.stderr(), /connection\(s\) closed: they took over 10 s to send a request's headers/);
  assert.equal(stopped.code, 0, s.stderr());
});

// An LM Studio-style session, message for message: initialize with
// 2025-06-18 (LM Studio rejects a server answering another revision),
// initialized, tools/list, then run_sagemath with the seed README's example.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { RawServer } from './helpers.js';

const EXAMPLE = 'R.<x> = QQ[]\nf = x^6 - 2*x^5 - 13*x^4 + 8*x^3 + 32*x^2 - 8*x - 4\nprint(f.factor())\nprint(f.discriminant())';

const transcript = [
  { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'LM Studio', version: '0.3.17' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_sagemath', arguments: { code: EXAMPLE }, _meta: { progressToken: 2 } } },
];

test('LM Studio transcript: the seed README example', { timeout: 180000 }, async () => {
  const s = new RawServer();
  try {
    s.send(transcript[0]);
    const init = await s.response(0);
    assert.equal(init.result.protocolVersion, '2025-06-18');
    assert.equal(init.result.serverInfo.name, 'sagebox');
    s.send(transcript[1]);
    s.send(transcript[2]);
    const list = await s.response(1);
    const sage = list.result.tools.find((t) => t.name === 'run_sagemath');
    assert.ok(sage && sage.inputSchema.properties.code);
    s.send(transcript[3]);
    const r = (await s.response(2, 150000)).result;
    assert.equal(r.isError, false, JSON.stringify(r));
    // What Sage prints: the sextic is irreducible over QQ, so its
    // factorization is itself, and its discriminant is 181118435328.
    assert.equal(r.structuredContent.stdout,
      'x^6 - 2*x^5 - 13*x^4 + 8*x^3 + 32*x^2 - 8*x - 4\n181118435328\n');
    assert.equal(r.content.length, 1);
    assert.equal(r.content[0].type, 'text');
    assert.equal(r.content[0].text,
      'x^6 - 2*x^5 - 13*x^4 + 8*x^3 + 32*x^2 - 8*x - 4\n181118435328\n\n[exit status 0]');
    // Progress notifications, if any, carried LM Studio's token.
    for (const n of s.notifications('notifications/progress')) assert.equal(n.params.progressToken, 2);
  } finally {
    const st = await s.close();
    assert.equal(st.code, 0);
  }
});

// Workspace files as links: a session's call that writes files
// lists each new or changed one as a resource_link content block
// (sagebox://session/ID/PATH, PATH relative to /work, percent-encoded), at
// most 20 with the rest counted; a call that writes nothing lists none; a
// stateless call never; a client of a revision before resource_link
// (2024-11-05) gets none.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { RawServer } from '../mcp/helpers.js';
import { sdkClient, closeClient, ok, open, run, LONG } from './helpers.js';

const links = (r) => r.content.filter((b) => b.type === 'resource_link');

describe('resource_link blocks for the files a session call writes', () => {
  let c;
  before(async () => { c = await sdkClient(); });
  after(async () => { if (c) await closeClient(c); });

  test('python: new and changed files, in order, capped at 20', { timeout: LONG }, async () => {
    const sid = await open(c, 'python');
    const base = `sagebox://session/${sid}/`;
    let res = await run(c, sid, 'python',
      'import os\nopen("a.txt", "w").write("hi")\nos.makedirs("d/e")\nopen("d/e/b c.csv", "w").write("1,2")\n');
    assert.equal(res.r.isError, false, res.text);
    assert.deepEqual(links(res.r), [
      { type: 'resource_link', uri: `${base}a.txt`, name: 'a.txt', mimeType: 'text/plain' },
      { type: 'resource_link', uri: `${base}d/e/b%20c.csv`, name: 'd/e/b c.csv', mimeType: 'text/csv' },
    ]);
    res = await run(c, sid, 'python', 'print(open("a.txt").read())');
    assert.deepEqual(links(res.r), []);
    res = await run(c, sid, 'python', 'open("a.txt", "a").write("!")\nopen("z.bin", "wb").write(b"\\0")');
    assert.deepEqual(links(res.r).map((l) => l.name), ['a.txt', 'z.bin']);
    assert.equal(links(res.r)[1].mimeType, undefined);
    res = await run(c, sid, 'python', 'for i in range(25): open("f%02d.txt" % i, "w").write("x")');
    assert.equal(links(res.r).length, 20);
    assert.equal(links(res.r)[19].name, 'f19.txt');
    assert.match(res.text, /\[5 more files written in \/work are not linked: a result links at most 20\]/);
    await ok(c, 'session_close', { session_id: sid });
  });

  test('shell, and a stateless call lists none', { timeout: LONG }, async () => {
    const sid = await open(c, 'shell');
    const res = await run(c, sid, 'shell', 'echo x > s.txt');
    assert.deepEqual(links(res.r).map((l) => l.uri), [`sagebox://session/${sid}/s.txt`]);
    await ok(c, 'session_close', { session_id: sid });
    const { r } = await ok(c, 'run_shell', { code: 'echo x > /tmp/t.txt; cd /tmp && echo y > u.txt' });
    assert.deepEqual(links(r), []);
  });
});

test('a 2024-11-05 client gets no resource_link blocks', { timeout: LONG }, async () => {
  const s = new RawServer();
  try {
    await s.initialize('2024-11-05');
    const open = await s.request(2, 'tools/call', { name: 'session_open', arguments: { lang: 'shell' } }, LONG);
    const sid = JSON.parse(open.result.content[0].text.match(/\{[^]*\}/)?.[0] ?? 'null')?.session_id
      ?? open.result.content[0].text.match(/s_[a-z0-9-]{1,32}_[0-9a-f]{32}/)[0];
    const r = await s.request(3, 'tools/call', { name: 'run_shell', arguments: { code: 'echo x > s.txt', session_id: sid } }, LONG);
    assert.equal(r.result.isError, false, JSON.stringify(r));
    assert.deepEqual(r.result.content.map((b) => b.type), ['text']);
    await s.request(4, 'tools/call', { name: 'session_close', arguments: { session_id: sid } }, LONG);
  } finally {
    await s.close();
  }
});

// Pictures in a session: a figure the code displays comes back as a PNG
// image block and is saved in the workspace as /work/figure-N.png (N
// counting on across calls, never over a file), and the text line says
// where; file_read gives the same PNG back.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { decodePng } from '../mcp/helpers.js';
import { sdkClient, closeClient, ok, open, run } from './helpers.js';

function images(r) {
  return r.content.filter((b) => b.type === 'image').map((b) => Buffer.from(b.data, 'base64'));
}

describe('figures in a session', () => {
  let c;
  let sid;
  before(async () => {
    c = await sdkClient();
    sid = await open(c, 'sage');
  });
  after(async () => {
    if (sid) await ok(c, 'session_close', { session_id: sid });
    if (c) await closeClient(c);
  });

  test('shown figures are image blocks saved as /work/figure-N.png, numbered on across calls', async () => {
    const first = await run(c, sid, 'sage', 'p = plot(sin(x), (x, 0, 2*pi))\np\n');
    assert.equal(first.r.isError, false, first.text);
    const [png1] = images(first.r);
    const d1 = decodePng(png1);
    assert.ok(Math.max(d1.width, d1.height) <= 1024);
    assert.match(first.text, new RegExp(`\\[figure 1: ${d1.width}×${d1.height} PNG, saved as /work/figure-1\\.png\\]`));
    assert.equal(first.s.figures[0].saved_path, '/work/figure-1.png');

    // p is still defined: the session kept it; matplotlib in the same call
    const second = await run(c, sid, 'sage',
      'show(p + point((1, 1)))\nimport matplotlib.pyplot as plt\nplt.plot([3, 1, 2])\nplt.show()\n');
    assert.equal(second.r.isError, false, second.text);
    const pngs = images(second.r);
    assert.equal(pngs.length, 2);
    pngs.forEach((p) => decodePng(p));
    assert.deepEqual(second.s.figures.map((f) => [f.figure, f.saved_path]),
      [[1, '/work/figure-2.png'], [2, '/work/figure-3.png']]);
    assert.match(second.text, /\[figure 2: 640×480 PNG, saved as \/work\/figure-3\.png\]/);

    // the saved file is the PNG the result carried
    const read = await ok(c, 'file_read', { session_id: sid, path: 'figure-3.png' });
    const back = images(read.r);
    assert.equal(back.length, 1);
    assert.ok(back[0].equals(pngs[1]));
  });

  test('a figure file of the code is never overwritten', async () => {
    await ok(c, 'file_write', { session_id: sid, path: 'figure-4.png', content: 'mine' });
    const r = await run(c, sid, 'python', 'import matplotlib.pyplot as plt\nplt.plot([1, 2])\n');
    assert.equal(r.r.isError, false, r.text);
    assert.equal(r.s.figures[0].saved_path, '/work/figure-5.png');
    const mine = await ok(c, 'file_read', { session_id: sid, path: 'figure-4.png' });
    assert.match(mine.text, /mine/);
  });
});

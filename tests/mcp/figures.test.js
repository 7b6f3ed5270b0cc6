// Figures (pictures): a plot the code displays comes back as an
// MCP image content block (PNG) plus a text line naming it, through the
// official SDK client against the real binary, in warm and fresh isolation.
// Each PNG is decoded here: signature, IHDR, and the inflated image data
// must have exactly the size its dimensions say.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { sdkClient, closeClient, textOf, decodePng } from './helpers.js';

const SAGE_TIMEOUT = 180000;
const MAX_SIDE = 1024;
const MAX_COUNT = 8;
const MAX_TOTAL = 600 << 10;

// The figures of a result: image blocks decoded and checked against the
// structured metadata and the text lines; returns their dimensions.
function checkFigures(r, { savedAs } = {}) {
  const images = r.content.filter((c) => c.type === 'image');
  const meta = r.structuredContent.figures || [];
  assert.equal(images.length, meta.length);
  let total = 0;
  const dims = images.map((img, i) => {
    assert.equal(img.mimeType, 'image/png');
    const png = Buffer.from(img.data, 'base64');
    const { width, height } = decodePng(png);
    assert.ok(Math.max(width, height) <= MAX_SIDE, `figure ${i + 1}: ${width}×${height}`);
    assert.deepEqual([meta[i].figure, meta[i].width, meta[i].height, meta[i].bytes, meta[i].mime_type],
      [i + 1, width, height, png.length, 'image/png']);
    const line = savedAs ? `[figure ${i + 1}: ${width}×${height} PNG, saved as ${savedAs(i + 1)}]`
      : `[figure ${i + 1}: ${width}×${height} PNG]`;
    assert.ok(textOf(r).includes(line), `${line} in ${textOf(r)}`);
    total += png.length;
    return [width, height];
  });
  assert.ok(total <= MAX_TOTAL, `${total} bytes of figures`);
  // the bytes travel once: as images, never in structuredContent (a display
  // PNG item names its image block)
  assert.ok(!JSON.stringify(r.structuredContent).includes(images[0]?.data.slice(0, 64) ?? '\0'));
  const pngs = (r.structuredContent.display || []).filter((e) => e.kind === 'png' || e.kind === 'threejs');
  assert.equal(pngs.length, images.length);
  return dims;
}

const SAGE_PLOTS = 'p = plot(sin(x), (x, 0, 2*pi))\nshow(p)\nprint("between")\np + point((1, 1), size=50)\n';
const MPL = [
  'import matplotlib.pyplot as plt',
  'plt.plot([1, 4, 9])',
  'plt.show()',
  'fig = plt.figure(figsize=(30, 10), dpi=200)   # drawn at most 1024 px wide',
  'fig.gca().bar([1, 2, 3], [3, 1, 2])',
  'print("left open")',
].join('\n');

for (const isolation of ['warm', 'fresh']) {
  describe(`figures (${isolation})`, () => {
    let c;
    before(async () => {
      c = await sdkClient({ args: ['--isolation', isolation] });
    });
    after(async () => {
      if (c) await closeClient(c);
    });

    test('a Sage plot shown and a plot as the last expression arrive as PNG images with text lines', async () => {
      const r = await c.client.callTool({ name: 'run_sagemath', arguments: { code: SAGE_PLOTS } }, undefined,
        { timeout: SAGE_TIMEOUT });
      assert.equal(r.isError, false, textOf(r));
      const dims = checkFigures(r);
      assert.equal(dims.length, 2);
      // the text comes first: a client that drops images still reads it
      assert.equal(r.content[0].type, 'text');
      assert.match(textOf(r), /^between\n/);
      assert.doesNotMatch(textOf(r), /Graphics object/);
      assert.equal(r.structuredContent.stdout, 'between\n');
    });

    test('matplotlib: plt.show() and a figure left open, a huge one scaled to the cap', async () => {
      const r = await c.client.callTool({ name: 'run_python', arguments: { code: MPL } }, undefined,
        { timeout: SAGE_TIMEOUT });
      assert.equal(r.isError, false, textOf(r));
      const dims = checkFigures(r);
      assert.deepEqual(dims, [[640, 480], [1024, 341]]);
      assert.equal(r.structuredContent.stdout, 'left open\n');
    });

    if (isolation === 'warm') {
      test('caps: at most 8 figures, the rest named as not shown', async () => {
        const code = 'import matplotlib.pyplot as plt\nfor i in range(11):\n    plt.figure(figsize=(2, 2)); plt.plot([0, i])\n';
        const r = await c.client.callTool({ name: 'run_python', arguments: { code } }, undefined,
          { timeout: SAGE_TIMEOUT });
        assert.equal(r.isError, false, textOf(r));
        assert.equal(checkFigures(r).length, MAX_COUNT);
        assert.match(textOf(r), /\[3 figures not shown, the first is figure 9: a result carries at most 8 figures\]/);
        assert.deepEqual(r.structuredContent.figures_not_shown.map((d) => [d.reason, d.count, d.first]),
          [['over_count', 3, 9]]);
      });

      test('caps: noisy figures are shrunk to the byte caps; what does not fit is named', async () => {
        const code = 'import numpy as np, matplotlib.pyplot as plt\nfor i in range(5):\n'
          + '    plt.figure(figsize=(8, 8)); plt.imshow(np.random.rand(400, 400)); plt.axis("off")\n';
        const r = await c.client.callTool({ name: 'run_python', arguments: { code } }, undefined,
          { timeout: SAGE_TIMEOUT });
        assert.equal(r.isError, false, textOf(r));
        const shown = checkFigures(r).length;
        const meta = r.structuredContent.figures;
        assert.ok(meta.every((f) => f.bytes <= 400 << 10));
        const notShown = r.structuredContent.figures_not_shown || [];
        assert.equal(shown + notShown.reduce((n, d) => n + d.count, 0), 5);
        assert.ok(notShown.length > 0, 'five noisy 800 px figures do not fit in 600 KiB');
        assert.match(textOf(r), /not shown.*at most 600 KiB of figures/);
      });

      test('no figure: no image block, and shell never has one', async () => {
        for (const [name, code] of [['run_python', 'print(1)'], ['run_shell', 'echo 1']]) {
          const r = await c.client.callTool({ name, arguments: { code } });
          assert.deepEqual(r.content.map((b) => b.type), ['text']);
          assert.equal(r.structuredContent.figures, undefined);
        }
      });
    }
  });
}

// Sage's rich output through the official SDK client against the
// real binary, in warm and fresh isolation: every displayed object in
// structuredContent.display, in order and in its richest form (the shape a
// viewer reads, docs/ARCHITECTURE.md "Rich output"), LaTeX as a "$$ … $$"
// line of the text, a PNG item carrying the same bytes as its image block,
// a 3D scene pointing at its PNG's image block.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { sdkClient, closeClient, textOf, decodePng } from './helpers.js';

const SAGE_TIMEOUT = 180000;

const EVERY_KIND = [
  'show(x^2/3)',
  'print("between")',
  'show(html("<i>hi</i>"))',
  'p = plot(sin(x), (x, 0, 1))',
  'show(p)',
  'dm = sage.repl.rich_output.get_display_manager()',
  'dm.preferences.graphics = "vector"',
  'show(p)',
  'sphere()',
].join('\n');

for (const isolation of ['warm', 'fresh']) {
  describe(`rich output (${isolation})`, () => {
    let c;
    before(async () => {
      c = await sdkClient({ args: ['--isolation', isolation] });
    });
    after(async () => {
      if (c) await closeClient(c);
    });
    const sage = (code) => c.client.callTool({ name: 'run_sagemath', arguments: { code } }, undefined,
      { timeout: SAGE_TIMEOUT });

    test('every kind in order: latex, html, png, svg, threejs with its png', async () => {
      const r = await sage(EVERY_KIND);
      assert.equal(r.isError, false, textOf(r));
      const s = r.structuredContent;
      assert.equal(s.stdout, 'between\n');
      const d = s.display;
      assert.deepEqual(d.map((e) => e.kind), ['latex', 'html', 'png', 'svg', 'threejs']);
      assert.deepEqual(d[0], { kind: 'latex', latex: '\\frac{1}{3} \\, x^{2}' });
      assert.deepEqual(d[1], { kind: 'html', html: '<i>hi</i>' });
      const images = r.content.filter((b) => b.type === 'image');
      assert.equal(images.length, 2);
      // the PNG item names the first image block (the bytes travel once), with its size
      assert.equal(d[2].mimeType, 'image/png');
      assert.equal(d[2].image, 0);
      assert.equal(d[2].data, undefined);
      const { width, height } = decodePng(Buffer.from(images[d[2].image].data, 'base64'));
      assert.deepEqual([d[2].width, d[2].height], [width, height]);
      assert.match(d[3].svg, /^<\?xml[^]*<svg/);
      // the scene as Sage's three.js template consumes it, and its PNG
      assert.deepEqual(Object.keys(d[4]).sort(), ['kind', 'png', 'scene']);
      assert.deepEqual(Object.keys(d[4].scene).sort(),
        ['ambient', 'bounds', 'lights', 'lines', 'options', 'points', 'surfaces', 'texts']);
      assert.equal(d[4].png, 1);
      assert.ok(d[4].scene.surfaces[0].vertices.length > 100);
      decodePng(Buffer.from(images[d[4].png].data, 'base64'));
      // what the model reads, in order after stdout
      const text = textOf(r);
      assert.match(text, /^between\n\n\$\$ \\frac\{1\}\{3\} \\, x\^\{2\} \$\$\n\[HTML 2:\]\n<i>hi<\/i>\n\[figure 1: \d+×\d+ PNG\]\n\[SVG image 3: \d+ bytes, shown by viewers that render SVG\]\n\[3D scene 4: an interactive three.js scene for viewers that render it; its picture follows\]\n\[figure 2: 500×500 PNG\]\n\[exit status 0\]$/);
    });

    test('a value is a text item and stays in stdout; nothing displayed: no display', async () => {
      let r = await sage('2^10');
      assert.equal(r.structuredContent.stdout, '1024\n');
      assert.deepEqual(r.structuredContent.display, [{ kind: 'text', text: '1024' }]);
      r = await sage('y = 1');
      assert.equal(r.structuredContent.display, undefined);
    });

    test('over the count: named in the text and the result', async () => {
      const r = await sage('for i in range(40): show(x^i)');
      assert.equal(r.structuredContent.display.length, 32);
      assert.match(textOf(r), /\[8 display items not shown, the first is item 33: a result carries at most 32 display items\]/);
      assert.deepEqual(r.structuredContent.display_not_shown,
        [{ reason: 'over_count', message: 'a result carries at most 32 display items', count: 8, first: 33 }]);
    });
  });
}

test('the run tools\' outputSchema allows display', async () => {
  const c = await sdkClient();
  try {
    const { tools } = await c.client.listTools();
    for (const name of ['run_sagemath', 'run_python']) {
      const p = tools.find((t) => t.name === name).outputSchema.properties;
      assert.equal(p.display.type, 'array');
      assert.deepEqual(p.display.items.properties.kind.enum, ['text', 'latex', 'html', 'png', 'svg', 'threejs', 'interact']);
      assert.ok(p.display_not_shown);
    }
  } finally {
    await closeClient(c);
  }
});

// The viewer (ui://sagebox/viewer) in a real browser, in both host setups
// (host.js): a real `sagebox mcp` gives the viewer with resources/read and
// runs real Sage with run_sagemath; the host feeds the result to the
// viewer. The formula is typeset (KaTeX's DOM), the PNG shows, the 3D
// canvas draws and turns when dragged, the HTML item is drawn in its own
// sandboxed frame, sized to its content, and the page makes no network
// request. Screenshots: VIEWER_ARTIFACTS (README's picture: viewer.png).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ARTIFACTS, HOSTS, canvasPixels, dragAcross, launchBrowser, openViewer, run, startSagebox, stop } from './harness.js';

// Sage code with a figure, a formula, HTML, an SVG figure and a 3D plot:
// the driver's display backend gives them as structuredContent.display
// items (png naming its image block, latex, html, svg, threejs with Sage's
// scene).
const CODE = String.raw`
x, y = var('x y')
plot(sin(x), (x, 0, 2*pi)).show()
show(integrate(1/(1+x^4), x))
show(html('<table border="1"><tr><th>n</th><th>n!</th></tr><tr><td>5</td><td>120</td></tr><tr><td>10</td><td>3628800</td></tr></table>'))
dm = sage.repl.rich_output.get_display_manager()
dm.preferences.graphics = 'vector'
plot(cos(x), (x, 0, 2*pi)).show()
dm.preferences.graphics = None
print('between')
plot3d(sin(x)*cos(y), (x, -2, 2), (y, -2, 2), plot_points=20, color='orange').show()
`;

// What the README shows: a typeset integral (a definite one: the
// antiderivative is wider than the page) and a 3D plot.
const PICTURE = String.raw`
x, y = var('x y')
show(integral(1/(1+x^4), x, 0, oo, hold=True) == integrate(1/(1+x^4), x, 0, oo))
plot3d(sin(x)*cos(y), (x, -3, 3), (y, -3, 3), plot_points=30, color='orange').show()
`;

let sb, browser, result, picture;

before(async () => {
  sb = await startSagebox();
  result = await run(sb.client, 'run_sagemath', CODE);
  assert.equal(result.isError, false, JSON.stringify(result.structuredContent));
  assert.deepEqual((result.structuredContent.display || []).map((d) => d.kind), ['png', 'latex', 'html', 'svg', 'threejs'],
    JSON.stringify(result.structuredContent).slice(0, 2000));
  picture = await run(sb.client, 'run_sagemath', PICTURE);
  assert.equal(picture.isError, false, JSON.stringify(picture.structuredContent));
  browser = await launchBrowser();
}, { timeout: 900000 });

after(() => stop(browser, sb));

for (const host of HOSTS) {
  test(`${host} host: a real run_sagemath result: formula, PNG, HTML, a 3D scene that turns; no network`, { timeout: 300000 }, async () => {
    const v = await openViewer(browser, host, sb, result);
    const { page, viewer: frame, rec } = v;
    assert.equal(await frame.$eval('.verdict', (e) => e.textContent.startsWith('ok')), true);

    // The formula is typeset by KaTeX: its HTML (and MathML) tree, not the TeX source.
    await frame.waitForSelector('.item.latex .katex .katex-html');
    const tex = await frame.$eval('.item.latex', (e) => ({ text: e.querySelector('.katex-html').textContent, mathml: !!e.querySelector('math') }));
    assert.ok(tex.mathml, 'KaTeX wrote MathML');
    assert.doesNotMatch(tex.text, /\\frac|\\log/, 'no raw TeX shown');
    assert.match(tex.text, /arctan/);
    // The radicals (KaTeX draws them as inline SVG) have their height: the page's CSS leaves them alone.
    const roots = await frame.$$eval('.item.latex .sqrt svg', (ss) => ss.map((e) => e.getBoundingClientRect().height));
    assert.ok(roots.length > 0 && roots.every((h) => h > 5), `radicals drawn: ${roots}`);

    // The PNG figure and the SVG one decoded, and nothing was refused.
    await frame.waitForFunction(() => { const i = document.querySelector('.item.png img'); return i && i.complete && i.naturalWidth > 0; });
    await frame.waitForFunction(() => { const i = document.querySelector('.item.svg img'); return i && i.complete && i.naturalWidth > 0; });
    assert.deepEqual(await frame.$$eval('.item.error', (es) => es.map((e) => e.textContent)), []);

    // The HTML item: in a frame of its own with an empty sandbox, its table
    // drawn there and the frame as tall as the table.
    const sandbox = await frame.$eval('.item.html iframe', (f) => f.getAttribute('sandbox'));
    assert.equal(sandbox, '');
    const inner = frame.childFrames().find((f) => f.url() === 'about:srcdoc');
    assert.ok(inner, 'the HTML item has its own frame');
    await inner.waitForSelector('table');
    const cells = await inner.$$eval('td', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(cells, ['5', '120', '10', '3628800']);
    await frame.waitForFunction(() => document.querySelector('.item.html iframe').offsetHeight > 40);
    const [frameH, tableH] = [await frame.$eval('.item.html iframe', (f) => f.offsetHeight),
      await inner.$eval('body', (b) => Math.ceil(b.getBoundingClientRect().height))];
    assert.ok(Math.abs(frameH - tableH) <= 4, `the HTML frame is ${frameH} px for ${tableH} px of content`);

    // The 3D scene drew, and turns when dragged.
    await frame.waitForSelector('.item.threejs canvas');
    await new Promise((r) => setTimeout(r, 1000));
    const before3d = await canvasPixels(frame);
    assert.ok(before3d.drawn > before3d.total * 0.05, `the 3D canvas is nearly blank: ${JSON.stringify(before3d)}`);
    // The host grew the iframe to the height the viewer asked for.
    await page.waitForFunction(() => document.getElementById('app').offsetHeight > 900);
    await page.screenshot({ path: path.join(ARTIFACTS, `viewer-page-${host}.png`), fullPage: true });
    const canvas = await frame.$('.item.threejs canvas');
    await canvas.screenshot({ path: path.join(ARTIFACTS, `viewer-3d-before-drag-${host}.png`) });
    await dragAcross(page, canvas);
    // (the software renderer draws the turned scene late on a busy machine:
    // up to 10 s)
    let after3d = await canvasPixels(frame);
    for (const t0 = Date.now(); after3d.hash === before3d.hash && Date.now() - t0 < 10000;) {
      await new Promise((r) => setTimeout(r, 250));
      after3d = await canvasPixels(frame);
    }
    await canvas.screenshot({ path: path.join(ARTIFACTS, `viewer-3d-after-drag-${host}.png`) });
    assert.notEqual(after3d.hash, before3d.hash, 'dragging turned the scene');
    assert.ok(after3d.drawn > after3d.total * 0.05, 'still drawn after the drag');

    // stdout is shown.
    const pres = await frame.$$eval('pre.stdout', (ps) => ps.map((p) => p.textContent).join('\n'));
    assert.match(pres, /between/);

    assert.deepEqual(rec.network, [], 'the page made network requests');
    assert.deepEqual(rec.cspErrors, [], 'CSP violations');
    assert.deepEqual(rec.pageErrors, [], 'page errors');
    assert.deepEqual(await page.evaluate(() => window.spy), [], 'the viewer asked the host for nothing');
    assert.equal((await page.evaluate(() => window.viewerLog))[0], 'initialized');
    await page.close();
  });
}

test('the README\'s picture: a typeset integral and a 3D plot (viewer.png)', { timeout: 300000 }, async () => {
  const v = await openViewer(browser, 'project', sb, picture, { width: 720, height: 1000 });
  await v.viewer.waitForSelector('.item.latex .katex');
  await v.viewer.waitForSelector('.item.threejs canvas');
  await new Promise((r) => setTimeout(r, 1000));
  const drawn = await canvasPixels(v.viewer);
  assert.ok(drawn.drawn > drawn.total * 0.05, 'the 3D plot drew');
  const app = await v.page.$('#app');
  const shot = path.join(ARTIFACTS, 'viewer.png');
  await app.screenshot({ path: shot });
  // The README shows a copy (docs/img/viewer.png, refreshed by hand: README.md here): both small.
  for (const f of [shot, fileURLToPath(new URL('../../docs/img/viewer.png', import.meta.url))])
    assert.ok(statSync(f).size < 200 << 10, `${f} is ${statSync(f).size} bytes; keep it under 200 KB`);
  console.log(`# screenshots in ${ARTIFACTS}; viewer.png is docs/img/viewer.png (tests/viewer/README.md)`);
  await v.page.close();
});

// A long formula in a narrow view, in both host setups (host.js): real
// Sage output (an antiderivative wider than the view, and a fraction whose
// numerator alone is wider than the view, which has nowhere to break).
// The first is broken into lines where KaTeX allows; what cannot break
// scrolls sideways in its own box; nothing is drawn past the view's right
// edge outside such a box (the layout measured in the browser, element by
// element). The height the viewer asks its host for follows its content:
// it drops when a later, shorter result replaces a long one.
// Screenshots: VIEWER_ARTIFACTS/viewer-long-formula-HOST.png (the docs'
// docs/img/viewer-long-formula.png is a copy of the project host's).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ARTIFACTS, HOSTS, launchBrowser, openViewer, run, startSagebox, stop } from './harness.js';

const CODE = String.raw`
x = var('x')
show(integral(1/(1+x^4), x))
show(expand((x + 1)^16) / (x - 1))
print('after the formulas')
`;
const WIDTH = 480;

let sb, browser, long, short;

before(async () => {
  sb = await startSagebox();
  long = await run(sb.client, 'run_sagemath', CODE);
  assert.equal(long.isError, false, JSON.stringify(long.structuredContent));
  assert.deepEqual(long.structuredContent.display.map((d) => d.kind), ['latex', 'latex']);
  short = await run(sb.client, 'run_sagemath', 'print(1 + 1)');
  assert.equal(short.isError, false, JSON.stringify(short.structuredContent));
  browser = await launchBrowser();
}, { timeout: 900000 });

after(() => stop(browser, sb));

// Every element of the viewer whose right edge is past the view's, and
// not inside a box that scrolls sideways (scrollWidth > clientWidth) with
// its own right edge inside the view. KaTeX's MathML copy is skipped (it is
// clipped to 1 px on purpose, for screen readers), and so are the shapes
// inside an <svg> (KaTeX draws a radical's tail far longer than needed and
// lets the <svg> clip it; the <svg> itself is checked).
function overflowing(frame) {
  return frame.evaluate(() => {
    const view = document.documentElement.clientWidth, bad = [];
    const scrolls = (e) => {
      const s = getComputedStyle(e).overflowX;
      return (s === 'auto' || s === 'scroll') && e.scrollWidth > e.clientWidth && e.getBoundingClientRect().right <= view + 0.5;
    };
    for (const e of document.body.querySelectorAll('*')) {
      if (e.closest('.katex-mathml') || (e.ownerSVGElement && e.closest('svg'))) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.right <= view + 0.5) continue;
      let p = e.parentElement, held = false;
      for (; p && p !== document.body; p = p.parentElement) if (scrolls(p)) { held = true; break; }
      if (!held) bad.push(`${e.tagName.toLowerCase()}.${e.getAttribute('class')} right=${Math.round(r.right)}`);
    }
    return { view, bad: bad.slice(0, 10), pageScroll: document.documentElement.scrollWidth - view };
  });
}

for (const host of HOSTS) {
  test(`${host} host: a long formula breaks into lines, an unbreakable one scrolls in its box, nothing is cut`,
    { timeout: 300000 }, async () => {
      const v = await openViewer(browser, host, sb, long, { width: WIDTH, height: 1200 });
      const { page, viewer: frame, rec } = v;
      await frame.waitForSelector('.item.latex .katex-html');
      await frame.waitForFunction(() => document.querySelectorAll('.item.latex .katex-html').length === 2);

      const o = await overflowing(frame);
      assert.deepEqual(o.bad, [], `drawn past the view's right edge (${o.view} px), outside a scroll box`);
      assert.equal(o.pageScroll, 0, 'the page itself scrolls sideways');

      const shape = await frame.$$eval('.item.latex', (items) => items.map((it) => {
        // A line starts where a part is drawn below the one before it (the
        // parts of one line overlap in height). Not "left of it": the lines
        // are centred, and with the system's fonts (a browser without
        // KaTeX's) a shorter next line starts right of the one before.
        const rects = [...it.querySelectorAll('.katex-html > .katex-base')].map((b) => b.getBoundingClientRect());
        return { lines: 1 + rects.filter((r, i) => i > 0 && r.top >= rects[i - 1].bottom - 1).length,
          scrollWidth: it.scrollWidth, clientWidth: it.clientWidth };
      }));
      // The antiderivative: broken where KaTeX allows, on more than one line, each within the box.
      assert.ok(shape[0].lines > 1, `the integral is on ${shape[0].lines} line(s)`);
      assert.ok(shape[0].scrollWidth <= shape[0].clientWidth, `the broken integral still scrolls: ${JSON.stringify(shape[0])}`);
      // The fraction has no break point: its box scrolls sideways, and scrolling shows its end.
      assert.ok(shape[1].scrollWidth > shape[1].clientWidth, `the fraction is not in a scrolling box: ${JSON.stringify(shape[1])}`);
      const scrolled = await frame.evaluate(() => {
        const it = document.querySelectorAll('.item.latex')[1];
        it.scrollLeft = it.scrollWidth;
        return it.scrollLeft;
      });
      assert.ok(scrolled > 0, 'the fraction\'s box scrolls');

      // The rest is there: stdout after the formulas.
      assert.match(await frame.$eval('pre.stdout', (p) => p.textContent), /after the formulas/);
      const app = await page.$('#app');
      await frame.evaluate(() => { document.querySelectorAll('.item.latex')[1].scrollLeft = 0; });
      await new Promise((r) => setTimeout(r, 300));
      await app.screenshot({ path: path.join(ARTIFACTS, `viewer-long-formula-${host}.png`) });

      // The height asked for is the content's, and drops with it: a later,
      // short result makes the host's frame shorter.
      await page.waitForFunction(() => window.sizes.length > 0);
      await new Promise((r) => setTimeout(r, 500));
      const tall = await page.$eval('#app', (f) => f.offsetHeight);
      const content = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
      assert.ok(Math.abs(tall - content) <= 2, `the frame is ${tall} px for ${content} px of content`);
      const asked = await page.evaluate(() => window.sizes.length);
      await page.evaluate((r) => window.bridge.sendToolResult(r), short);
      await frame.waitForFunction(() => /2/.test(document.querySelector('pre.stdout')?.textContent || ''));
      await page.waitForFunction((n, h) => window.sizes.length > n && window.sizes.at(-1).height < h, { timeout: 10000 }, asked, tall);
      const low = await page.$eval('#app', (f) => f.offsetHeight);
      const lowContent = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
      assert.ok(low < tall / 2, `the frame went from ${tall} px to ${low} px only`);
      assert.ok(Math.abs(low - lowContent) <= 2, `the frame is ${low} px for ${lowContent} px of content`);

      assert.deepEqual(rec.network, [], 'the page made network requests');
      assert.deepEqual(rec.cspErrors, [], 'CSP violations');
      assert.deepEqual(rec.pageErrors, [], 'page errors');
      await page.close();
    });
}

test('the docs\' picture of a long formula stays small (docs/img/viewer-long-formula.png)', () => {
  const f = fileURLToPath(new URL('../../docs/img/viewer-long-formula.png', import.meta.url));
  assert.ok(statSync(f).size < 200 << 10, `${f} is ${statSync(f).size} bytes; keep it under 200 KB`);
});

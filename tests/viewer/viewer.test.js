// The viewer (ui://sagebox/viewer) in a real browser: a host page
// made with the MCP Apps SDK's AppBridge gets the viewer from a real
// `sagebox mcp` with resources/read and feeds it a real run_sagemath result.
// The formula is typeset (KaTeX's DOM), the PNG shows, the 3D canvas draws
// and turns when dragged, and the page makes no network request (every
// request is intercepted: the host page and its bridge are answered from
// memory, anything else fails the test). Screenshots: VIEWER_ARTIFACTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import puppeteer from 'puppeteer-core';

import { HOST_PAGE, bridgeBundle, withCsp } from './host.js';

const BIN = process.env.SAGEBOX_BIN || path.resolve('../../build/sagebox');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = process.env.VIEWER_ARTIFACTS || path.join(tmpdir(), 'sagebox-viewer-artifacts');
const HOST = 'http://host.invalid/';
const UI = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

// Sage code with a formula, a 2D figure and a 3D plot: the driver's display
// backend gives them as structuredContent.display items (latex, png naming
// its image block, threejs with Sage's scene), which the viewer draws.
const CODE = String.raw`
x, y = var('x y')
plot(sin(x), (x, 0, 2*pi)).show()
show(integrate(1/(1+x^4), x))
print('between')
plot3d(sin(x)*cos(y), (x, -2, 2), (y, -2, 2), plot_points=20, color='orange').show()
`;

let client, browser, html, result;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/install-deps --test (it installs chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  client = new Client({ name: 'sagebox-viewer-test', version: '1' }, { capabilities: UI });
  await client.connect(new StdioClientTransport({ command: BIN, args: ['mcp'], env: process.env, stderr: 'inherit' }));
  const tools = (await client.listTools()).tools;
  assert.equal(tools.find((t) => t.name === 'run_sagemath')._meta?.ui?.resourceUri, 'ui://sagebox/viewer');
  const read = await client.readResource({ uri: 'ui://sagebox/viewer' });
  html = read.contents[0].text;
  const r = await client.callTool({ name: 'run_sagemath', arguments: { code: CODE, timeout_seconds: 300 } },
    undefined, { timeout: 400000 });
  assert.equal(r.isError, false, JSON.stringify(r.structuredContent));
  assert.deepEqual((r.structuredContent.display || []).map((d) => d.kind), ['png', 'latex', 'threejs'],
    JSON.stringify(r.structuredContent).slice(0, 2000));
  result = r;
  browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    // --no-sandbox: the tests may run as root, where chromium's own sandbox
    // refuses to start. SwiftShader: WebGL without a GPU.
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--window-size=800,1600'],
  });
}, { timeout: 600000 });

after(async () => {
  await browser?.close();
  await client?.close();
});

// Pixels of the viewer's WebGL canvas: how many are not the background, and a fingerprint.
async function canvasPixels(frame) {
  return frame.evaluate(() => {
    const c = document.querySelector('.item.threejs canvas');
    const img = document.createElement('canvas');
    img.width = c.width; img.height = c.height;
    const g = img.getContext('2d');
    g.drawImage(c, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let drawn = 0, hash = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) drawn++;
      hash = (hash * 31 + d[i] + 3 * d[i + 1] + 7 * d[i + 2]) >>> 0;
    }
    return { drawn, total: d.length / 4, hash, width: c.width, height: c.height };
  });
}

test('the viewer shows a real run_sagemath result: formula, PNG, a 3D scene that turns; no network', { timeout: 300000 }, async () => {
  const page = await browser.newPage();
  await page.setViewport({ width: 800, height: 1600 });
  const bundle = await bridgeBundle();
  const network = [], cspErrors = [], pageErrors = [];
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const url = req.url();
    if (url === HOST) return req.respond({ status: 200, contentType: 'text/html', body: HOST_PAGE });
    if (url === `${HOST}bridge.js`) return req.respond({ status: 200, contentType: 'text/javascript', body: bundle });
    if (url.startsWith('data:') || url === 'about:srcdoc') return req.continue();
    network.push(url);
    return req.abort();
  });
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) cspErrors.push(m.text()); });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(HOST);
  await page.evaluate((h, r) => window.startViewer(h, r), withCsp(html), result);

  const frame = await (await page.waitForSelector('#app')).contentFrame();
  await frame.waitForSelector('.verdict', { timeout: 30000 });
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

  // The PNG figure decoded.
  await frame.waitForFunction(() => { const i = document.querySelector('.item.png img'); return i && i.complete && i.naturalWidth > 0; });

  // The 3D scene drew, and turns when dragged.
  await frame.waitForSelector('.item.threejs canvas');
  await new Promise((r) => setTimeout(r, 1000));
  const before3d = await canvasPixels(frame);
  assert.ok(before3d.drawn > before3d.total * 0.05, `the 3D canvas is nearly blank: ${JSON.stringify(before3d)}`);
  // The host grew the iframe to the height the viewer asked for.
  await page.waitForFunction(() => document.getElementById('app').offsetHeight > 900);
  await page.screenshot({ path: path.join(ARTIFACTS, 'viewer-page.png'), fullPage: true });
  const canvas = await frame.$('.item.threejs canvas');
  await canvas.screenshot({ path: path.join(ARTIFACTS, 'viewer-3d-before-drag.png') });
  const box = await canvas.boundingBox();
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(cx + 15 * i, cy + 4 * i);
  await page.mouse.up();
  await new Promise((r) => setTimeout(r, 500));
  const after3d = await canvasPixels(frame);
  await canvas.screenshot({ path: path.join(ARTIFACTS, 'viewer-3d-after-drag.png') });
  assert.notEqual(after3d.hash, before3d.hash, 'dragging turned the scene');
  assert.ok(after3d.drawn > after3d.total * 0.05, 'still drawn after the drag');

  // stdout is shown.
  const pres = await frame.$$eval('pre.stdout', (ps) => ps.map((p) => p.textContent).join('\n'));
  assert.match(pres, /between/);

  assert.deepEqual(network, [], 'the page made network requests');
  assert.deepEqual(cspErrors, [], 'CSP violations');
  assert.deepEqual(pageErrors, [], 'page errors');
  const log = await page.evaluate(() => window.viewerLog);
  assert.equal(log[0], 'initialized');
  console.log(`# screenshots in ${ARTIFACTS}`);
  await page.close();
});

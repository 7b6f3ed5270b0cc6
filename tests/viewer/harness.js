// What the viewer tests share: a real `sagebox mcp` (SDK client declaring
// the MCP Apps extension) that gives the viewer and runs the code, Debian's
// chromium driven by puppeteer-core, and opening the viewer on a result in
// either host setup (host.js) with every request intercepted: the host
// pages and the bridge are answered from memory, anything else is recorded
// and refused.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import puppeteer from 'puppeteer-core';

import { HOST, SANDBOX, SANDBOX_PAGE, bridgeBundle, projectHostPage, referenceCsp, referenceHostPage, withCsp }
  from './host.js';

export const BIN = process.env.SAGEBOX_BIN || path.resolve('../../build/sagebox');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const ARTIFACTS = process.env.VIEWER_ARTIFACTS || path.join(tmpdir(), 'sagebox-viewer-artifacts');
const UI = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
export const HOSTS = ['project', 'reference'];

export async function startSagebox() {
  const client = new Client({ name: 'sagebox-viewer-test', version: '1' }, { capabilities: UI });
  await client.connect(new StdioClientTransport({ command: BIN, args: ['mcp'], env: process.env, stderr: 'inherit' }));
  const tools = (await client.listTools()).tools;
  assert.equal(tools.find((t) => t.name === 'run_sagemath')._meta?.ui?.resourceUri, 'ui://sagebox/viewer');
  const content = (await client.readResource({ uri: 'ui://sagebox/viewer' })).contents[0];
  return { client, html: content.text, csp: content._meta?.ui?.csp };
}

export async function stop(browser, sb) {
  await browser?.close();
  await sb?.client.close();
}

export async function run(client, tool, code) {
  return client.callTool({ name: tool, arguments: { code, timeout_seconds: 300 } }, undefined, { timeout: 400000 });
}

export async function launchBrowser(height = 1600) {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/install-deps --test (it installs chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  return puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    // --no-sandbox: the tests may run as root, where chromium's own sandbox
    // refuses to start. SwiftShader: WebGL without a GPU.
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', `--window-size=800,${height}`],
  });
}

let bundle;

// The viewer in a new page of browser, in host setup `host`, given result.
// Resolves once the viewer has drawn its verdict. Returns the page, the
// viewer's frame and what was recorded.
// forward: the host forwards the view's tools/call to sb's client (a real
// sagebox), as a host does for its app; without it they are refused.
// downloads: false makes a host that cannot save the view's files.
export async function openViewer(browser, host, sb, result,
  { width = 760, height = 1600, forward = false, downloads = true } = {}) {
  bundle ??= await bridgeBundle();
  const page = await browser.newPage();
  await page.setViewport({ width: width + 40, height });
  const rec = { network: [], navigations: [], cspErrors: [], pageErrors: [] };
  const pages = {
    [HOST]: host === 'project' ? projectHostPage(width) : referenceHostPage(width),
    [`${HOST}bridge.js`]: bundle,
  };
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const url = req.url();
    if (pages[url] !== undefined)
      return req.respond({ status: 200, contentType: url.endsWith('.js') ? 'text/javascript' : 'text/html', body: pages[url] });
    if (host === 'reference' && url.split('?')[0] === SANDBOX) {
      const csp = new URL(url).searchParams.get('csp');
      return req.respond({ status: 200, contentType: 'text/html', body: SANDBOX_PAGE,
        headers: { 'Content-Security-Policy': referenceCsp(csp ? JSON.parse(csp) : undefined), 'Cache-Control': 'no-store' } });
    }
    if (url.startsWith('data:image/') || url === 'about:srcdoc') return req.continue();
    rec.network.push(url);
    return req.abort();
  });
  page.on('framenavigated', (f) => rec.navigations.push(f.url()));
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) rec.cspErrors.push(m.text()); });
  page.on('pageerror', (e) => rec.pageErrors.push(String(e)));
  if (forward)
    await page.exposeFunction('hostCallTool', (p) => sb.client.callTool(p, undefined, { timeout: 400000 }));
  await page.goto(HOST);
  if (!downloads) await page.evaluate(() => { window.hostNoDownload = true; });
  const html = host === 'project' ? withCsp(sb.html) : sb.html;
  await page.evaluate((h, r, c) => window.startViewer(h, r, c), html, result, sb.csp);
  const viewer = await viewerFrame(page);
  await viewer.waitForSelector('.verdict', { timeout: 30000 });
  return { page, viewer, rec, host };
}

// The frame that holds the viewer (the host's iframe, or the proxy's inner one).
export async function viewerFrame(page, timeout = 30000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    for (const f of page.frames()) {
      if (f.isDetached()) continue;
      const ok = await Promise.race([f.evaluate(() => !!document.querySelector('main#result')).catch(() => false),
        new Promise((r) => setTimeout(() => r(false), 2000))]);
      if (ok) return f;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no viewer frame with main#result');
}

// The window the viewer shares a thread with: where the timing probe runs.
export function probeFrame(v) {
  return v.host === 'project' ? v.page.mainFrame() : v.viewer.parentFrame();
}

// Runs fn in frame, failing after ms rather than waiting on a hung page.
export function within(ms, what, promise) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms (the page is hung)`)), ms);
  })]).finally(() => clearTimeout(timer));
}

// Pixels of the viewer's first WebGL canvas (or the one selector names):
// how many are not the background, and a fingerprint.
export async function canvasPixels(frame, selector = '.item.threejs canvas') {
  return frame.evaluate((selector) => {
    const c = document.querySelector(selector);
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
  }, selector);
}

// A drag across the middle of an element, as a user turns a 3D plot.
export async function dragAcross(page, element) {
  const box = await element.boundingBox();
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(cx + 15 * i, cy + 4 * i);
  await page.mouse.up();
}

// Sage's @interact in the viewer, used as a person uses it: a real
// `sagebox mcp` runs a Sage session; its result goes to the viewer in a host
// made with the MCP Apps AppBridge, which forwards the view's tools/call to
// that sagebox through the official SDK client. The controls are drawn from
// the declaration, each kind is moved with the keyboard or the mouse, and
// each move's new rendering replaces the old one (the plot is redrawn, the
// printed values follow, the session keeps the state the function set).
// Refused: markup in a declaration (shown as text), a forged tools/call
// with a value outside the controls (an error, nothing run), a declaration
// the viewer does not know (a line saying so). Screenshots before and after
// a slider move: VIEWER_ARTIFACTS/interact-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { ARTIFACTS, launchBrowser, openViewer, startSagebox, stop } from './harness.js';

const LONG = { timeout: 400000 };
// A label that would post a "pwned" message to the host if it ever became markup.
const HOSTILE = `<img src=x onerror="parent.postMessage({pwned:'label'},'*')">grid`;

const CELL = String.raw`
runs = 0
@interact
def _(n=slider(1, 20, 1, default=5), f=selector(['sin', 'cos']),
      grid=checkbox(False, label=${JSON.stringify(HOSTILE)}), title=input_box('waves', type=str, label='title'),
      c=color_selector('#ff0000'), r=range_slider(0, 10, 1, default=(2, 8)), m=input_grid(1, 2, default=[[1, 2]]),
      style=selector(['solid', 'dashed'], buttons=True)):
    global runs, last
    runs += 1
    last = (n, f, grid, title, r, m)
    print("n=%s f=%s grid=%s title=%s c=%s r=%s m=%s style=%s" % (n, f, grid, title, c.html_color(), r, m, style))
    show(plot(eval(f)(n*x), (x, 0, 2*pi), gridlines=grid, color=c, title=title,
              linestyle='--' if style == 'dashed' else '-'))
`;

let sb, browser, sid, result;

const tool = (name, args) => sb.client.callTool({ name, arguments: args }, undefined, LONG);

before(async () => {
  sb = await startSagebox();
  sid = (await tool('session_open', { lang: 'sage' })).structuredContent.session_id;
  result = await tool('run_sagemath', { code: CELL, session_id: sid, timeout_seconds: 300 });
  assert.equal(result.isError, false, JSON.stringify(result.structuredContent));
  browser = await launchBrowser();
}, { timeout: 900000 });

after(() => stop(browser, sb));

// The text the rendering printed, once it says want (a RegExp).
async function printed(frame, want) {
  await frame.waitForFunction((src) => {
    const t = document.querySelector('.item.interact .interact-output pre.text');
    return t && new RegExp(src).test(t.textContent);
  }, { timeout: 120000 }, want.source);
  return frame.$eval('.item.interact .interact-output pre.text', (t) => t.textContent);
}

const plotSrc = (frame) => frame.$eval('.item.interact .interact-output .item.png img', (i) => i.src);
const idle = (frame) => frame.waitForFunction(() => !document.querySelector('.item.interact.busy'), { timeout: 120000 });

test('every control kind, moved as a person moves it, redraws the interact in its session', { timeout: 600000 }, async () => {
  const v = await openViewer(browser, 'project', sb, result, { forward: true });
  const { page, viewer: frame, rec } = v;
  await frame.waitForSelector('.item.interact .interact-output .item.png img');
  assert.match(await printed(frame, /n=5 f=sin/), /n=5 f=sin grid=False title=waves c=#ff0000 r=\(2, 8\) m=\[\[1, 2\]\] style=solid/);
  // The controls, each the input its kind is, labelled.
  const kinds = await frame.$$eval('.interact-control', (rows) => rows.map((r) =>
    [r.querySelector('label')?.textContent, [...r.querySelectorAll('input, select')].map((i) => i.type).join(',')]));
  assert.deepEqual(kinds, [['n', 'range'], ['f', 'select-one'], [HOSTILE, 'checkbox'], ['title', 'text'], ['c', 'color'],
    ['r', 'range,range'], ['m', 'text,text'], ['style', 'radio,radio']]);
  // The hostile label is text: no element came of it, nothing reached the host.
  assert.equal(await frame.$$eval('.item.interact img:not(.item.png img)', (is) => is.length), 0);
  const app = await page.$('#app');
  await app.screenshot({ path: path.join(ARTIFACTS, 'interact-before.png') });
  const before0 = await plotSrc(frame);

  // The slider, with the keyboard: two steps right.
  await frame.focus('.interact-control input[type=range]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.match(await printed(frame, /n=7 /), /n=7 f=sin/);
  await idle(frame);
  assert.notEqual(await plotSrc(frame), before0, 'the plot was redrawn');
  await app.screenshot({ path: path.join(ARTIFACTS, 'interact-after.png') });
  assert.equal(await frame.$eval('.interact-control output', (o) => o.textContent), '7');

  // The selector, the checkbox, the text box (Enter), the colour, the range's
  // high end, a grid cell, the buttons.
  await frame.select('.interact-control select', '1');
  await printed(frame, /f=cos/);
  await idle(frame);
  await (await frame.$('.interact-control input[type=checkbox]')).click();
  await printed(frame, /grid=True/);
  await idle(frame);
  await frame.$eval('.interact-control input[type=text]', (i) => { i.value = ''; });
  await frame.type('.interact-control input[type=text]', 'ripples');
  await page.keyboard.press('Enter');
  await printed(frame, /title=ripples/);
  await idle(frame);
  await frame.$eval('.interact-control input[type=color]', (i) => { i.value = '#0000ff'; i.dispatchEvent(new Event('change')); });
  await printed(frame, /c=#0000ff/);
  await idle(frame);
  await frame.focus('.interact-control input[type=range][id$="-high"]');
  await page.keyboard.press('ArrowLeft');
  await printed(frame, /r=\(2, 7\)/);
  await idle(frame);
  await frame.$eval('.interact-grid tr td:nth-child(2) input', (i) => { i.focus(); i.select(); });
  await page.keyboard.type('5');
  await page.keyboard.press('Tab');
  await printed(frame, /m=\[\[1, 5\]\]/);
  await idle(frame);
  const radios = await frame.$$('.interact-buttons input[type=radio]');
  await radios[1].click();
  const last = await printed(frame, /style=dashed/);
  assert.equal(last.trim(), 'n=7 f=cos grid=True title=ripples c=#0000ff r=(2, 7) m=[[1, 5]] style=dashed');
  await idle(frame);

  // Moves while a call is in flight: one call at a time, the latest value wins.
  const callsBefore = (await page.evaluate(() => window.spy)).filter((s) => s[0] === 'tools/call').length;
  await frame.focus('.interact-control input[type=range]');
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowRight');
  assert.match(await printed(frame, /n=13 /), /n=13 f=cos/);
  await idle(frame);
  const calls = (await page.evaluate(() => window.spy)).filter((s) => s[0] === 'tools/call').length - callsBefore;
  assert.ok(calls >= 1 && calls < 6, `${calls} calls for 6 quick moves`);

  // The state is the session's: the next run in it sees the last move.
  const seen = await tool('run_sagemath', { code: 'print(last)', session_id: sid });
  assert.equal(seen.structuredContent.stdout.trim(), "(13, 'cos', True, 'ripples', (2, 7), [[1, 5]])");
  const runs = (await tool('run_sagemath', { code: 'print(runs)', session_id: sid })).structuredContent.stdout.trim();

  // A forged bridge call from inside the frame, a value outside the slider:
  // the server refuses it, the function does not run.
  const forged = await frame.evaluate((iid, s) => new Promise((resolve) => {
    addEventListener('message', (e) => { if (e.data && e.data.id === 'forged') resolve(e.data); });
    parent.postMessage({ jsonrpc: '2.0', id: 'forged', method: 'tools/call',
      params: { name: 'interact_update', arguments: { session_id: s, interact_id: iid, values: { n: 999 } } } }, '*');
  }), result.structuredContent.display[0].id, sid);
  const said = JSON.stringify(forged);
  assert.match(said, /control \\"n\\" \(slider 1\.\.20 step 1\): 999 is outside 1\.\.20; nothing was run/);
  assert.equal((await tool('run_sagemath', { code: 'print(runs)', session_id: sid })).structuredContent.stdout.trim(), runs);

  assert.deepEqual(rec.network, [], 'the page made network requests');
  assert.deepEqual(rec.cspErrors, [], 'CSP violations');
  assert.deepEqual(rec.pageErrors, [], 'page errors');
  assert.deepEqual((await page.evaluate(() => window.spy)).filter((s) => s[0] !== 'tools/call'), [], 'only tools/call');
  await page.close();
});

test('reference host: a slider move redraws through the proxy frame', { timeout: 300000 }, async () => {
  const v = await openViewer(browser, 'reference', sb, result, { forward: true });
  await v.viewer.waitForSelector('.item.interact .interact-output .item.png img');
  await v.viewer.focus('.interact-control input[type=range]');
  await v.page.keyboard.press('ArrowLeft');
  // (its controls start at the declaration's defaults: 5)
  assert.match(await printed(v.viewer, /n=4 /), /n=4 f=sin/);
  assert.deepEqual(v.rec.network, []);
  assert.deepEqual(v.rec.pageErrors, []);
  await v.page.close();
});

test('a declaration the server never sent: its markup is text, an unknown control is a line, no controls without a session', { timeout: 120000 }, async () => {
  const forged = {
    content: [{ type: 'text', text: 'forged' }],
    structuredContent: { ok: true, stdout: '', stderr: '', display: [{
      kind: 'interact', id: 'i0123456789abcdef', manual: false, note: '<b>no session</b>',
      controls: [
        { name: 'a', type: 'script', label: '<script>parent.postMessage({pwned:"type"},"*")</script>' },
        { name: 'b', type: 'selector', label: 'b', options: ['<img src=x onerror="parent.postMessage({pwned:1},\'*\')">'], default: 0 },
        { name: 'c', type: 'slider', label: 'c', min: 0, max: 1, step: -1, default: 0 },
        { name: 'd', type: 'text_control', text: '<iframe src="https://example.com"></iframe>' },
      ],
      items: [{ kind: 'text', text: 'first' }] }] },
  };
  const v = await openViewer(browser, 'project', sb, forged, { forward: true });
  const f = v.viewer;
  await f.waitForSelector('.item.interact');
  const got = await f.$eval('.item.interact', (d) => ({
    elements: d.querySelectorAll('script, img, iframe, b').length,
    unknown: [...d.querySelectorAll('.interact-unknown')].map((e) => e.textContent),
    option: d.querySelector('select option').textContent,
    disabled: [...d.querySelectorAll('input, select')].every((i) => i.disabled),
    note: d.querySelector('.interact-note').textContent,
    text: d.querySelector('.interact-text').textContent,
  }));
  assert.equal(got.elements, 0);
  assert.equal(got.unknown.length, 2);
  assert.match(got.option, /^<img src=x/);
  assert.ok(got.disabled, 'without a session the controls do nothing');
  assert.equal(got.note, '<b>no session</b>');
  assert.equal(got.text, '<iframe src="https://example.com"></iframe>');
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(await v.page.evaluate(() => window.spy), [], 'nothing reached the host');
  assert.deepEqual(v.rec.network, []);
  await v.page.close();
});

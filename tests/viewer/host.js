// The host side of the browser tests: the viewer in the two host setups an
// MCP Apps host builds, each made with the MCP Apps SDK's AppBridge
// (bundled here with esbuild from the locked package):
//
//   project    one iframe, sandbox="allow-scripts", the viewer as its
//              srcdoc under the extension's default CSP (a meta element:
//              srcdoc has no headers) — the page shares the host's process;
//   reference  as @modelcontextprotocol/ext-apps' reference web host
//              (examples/basic-host) does it: an outer "sandbox proxy"
//              frame on another origin, served with the CSP built from the
//              resource's declared _meta.ui.csp as a header, relaying
//              messages to an inner frame with sandbox="allow-scripts
//              allow-same-origin allow-forms" that gets the viewer by
//              document.write.
//
// Both host pages record what a host would act on — ui/message (a chat
// message in the user's name), ui/open-link, ui/download-file (a file the
// host would save), tools/call (forwarded to a real sagebox when the test
// says so), the other requests
// a view may make, and any message with a "pwned" marker from any window —
// and run a timing probe in the window whose thread the viewer shares (the
// host page; the proxy frame in the reference setup): the longest gap
// between 25 ms ticks.
import { build } from 'esbuild';

export const HOST = 'http://host.invalid/';
export const SANDBOX = 'http://sandbox.invalid/sandbox.html';

// The extension's default CSP for a resource that asks for no domains
// (SEP-1865, "Content Security Policy"): inline scripts and styles, data:
// images, no connections.
export const DEFAULT_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
  + "img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

// The reference host's header from a resource's declared CSP
// (examples/basic-host/src/csp.ts, buildCspHeader).
export function referenceCsp(csp = {}) {
  const ok = (list) => (list || []).filter((d) => typeof d === 'string' && !/[;\r\n'" ]/.test(d));
  const resources = ok(csp.resourceDomains).join(' '), connect = ok(csp.connectDomains).join(' ');
  const frames = ok(csp.frameDomains).join(' '), base = ok(csp.baseUriDomains).join(' ');
  return [
    "default-src 'self' 'unsafe-inline'",
    `script-src 'self' 'unsafe-inline' 'unsafe-eval' blob: data: ${resources}`.trim(),
    `style-src 'self' 'unsafe-inline' blob: data: ${resources}`.trim(),
    `img-src 'self' data: blob: ${resources}`.trim(),
    `font-src 'self' data: blob: ${resources}`.trim(),
    `media-src 'self' data: blob: ${resources}`.trim(),
    `connect-src 'self' ${connect}`.trim(),
    `worker-src 'self' blob: ${resources}`.trim(),
    frames ? `frame-src ${frames}` : "frame-src 'none'",
    "object-src 'none'",
    base ? `base-uri ${base}` : "base-uri 'none'",
  ].join('; ');
}

export async function bridgeBundle() {
  const out = await build({
    stdin: {
      contents: "export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';",
      resolveDir: new URL('.', import.meta.url).pathname,
    },
    bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

// The timing probe and the catch-all spy, in both host pages (and the probe
// in the reference proxy).
const PROBE = `
window.probe = { last: performance.now(), maxGap: 0, reset() { this.last = performance.now(); this.maxGap = 0; } };
setInterval(() => { const t = performance.now(); probe.maxGap = Math.max(probe.maxGap, t - probe.last); probe.last = t; }, 25);`;

const HOST_SCRIPT = `
import { AppBridge, PostMessageTransport } from '/bridge.js';
${PROBE}
window.spy = []; window.sizes = [];
addEventListener('message', (e) => { if (e.data && e.data.pwned) spy.push(['pwned', e.data.pwned]); });
function newBridge(iframe, result) {
  // window.hostNoDownload: a host that cannot save a view's files (no
  // downloadFile capability), as many hosts are.
  const caps = { openLinks: {}, serverTools: {}, serverResources: {}, message: { text: {} }, updateModelContext: { text: {} },
    downloadFile: {}, logging: {} };
  if (window.hostNoDownload) delete caps.downloadFile;
  const bridge = new AppBridge(null, { name: 'sagebox-viewer-test-host', version: '1' }, caps);
  window.bridge = bridge; // a test sends the view a later result through it
  const record = (method) => async (params) => { spy.push([method, params]); return {}; };
  bridge.onmessage = record('ui/message');
  bridge.onopenlink = record('ui/open-link');
  bridge.ondownloadfile = record('ui/download-file');
  bridge.onupdatemodelcontext = record('ui/update-model-context');
  bridge.onrequestdisplaymode = async (p) => { spy.push(['ui/request-display-mode', p]); return { mode: 'inline' }; };
  // A view's tools/call goes to the server when the test gave the host a
  // client (window.hostCallTool: a real sagebox behind the official SDK
  // client), as a host forwards it; otherwise it is refused.
  bridge.oncalltool = async (p) => {
    spy.push(['tools/call', p]);
    return window.hostCallTool ? window.hostCallTool(p) : { content: [], isError: true };
  };
  bridge.onlistresources = async (p) => { spy.push(['resources/list', p]); return { resources: [] }; };
  bridge.onreadresource = async (p) => { spy.push(['resources/read', p]); return { contents: [] }; };
  window.viewerLog = [];
  bridge.oninitialized = () => { viewerLog.push('initialized'); probe.reset(); bridge.sendToolResult(result); };
  bridge.onsizechange = (p) => {
    sizes.push(p);
    if (p.height) iframe.style.height = p.height + 'px'; // as a host does: the view asks for its height
  };
  return bridge;
}`;

const PAGE = (width, body) => `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>sagebox viewer test host</title><link rel="icon" href="data:,">
<style>body{margin:0;background:#eee} iframe{display:block;width:${width}px;height:600px;border:0;background:#fff}</style>
</head><body>${body}</body></html>`;

export function projectHostPage(width) {
  return PAGE(width, `<iframe id="app" sandbox="allow-scripts"></iframe>
<script type="module">${HOST_SCRIPT}
window.startViewer = async (html, result) => {
  const iframe = document.getElementById('app');
  const bridge = newBridge(iframe, result);
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
};
</script>`);
}

export function referenceHostPage(width) {
  return PAGE(width, `<iframe id="app"></iframe>
<script type="module">${HOST_SCRIPT}
window.startViewer = async (html, result, csp) => {
  const iframe = document.getElementById('app');
  iframe.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  const ready = new Promise((resolve) => addEventListener('message', function l(e) {
    if (e.source === iframe.contentWindow && e.data?.method === 'ui/notifications/sandbox-proxy-ready') {
      removeEventListener('message', l); resolve();
    }
  }));
  const url = new URL('${SANDBOX}');
  if (csp) url.searchParams.set('csp', JSON.stringify(csp));
  iframe.src = url.href;
  await ready;
  const bridge = newBridge(iframe, result);
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await bridge.sendSandboxResourceReady({ html, csp });
};
</script>`);
}

// The reference sandbox proxy (examples/basic-host/src/sandbox.ts), with
// the test host's origin in place of localhost, and the timing probe.
export const SANDBOX_PAGE = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>html,body{margin:0;height:100%;overflow:hidden}</style></head><body>
<script>${PROBE}
const EXPECTED_HOST_ORIGIN = new URL(document.referrer).origin;
const OWN_ORIGIN = location.origin;
const inner = document.createElement('iframe');
inner.style = 'width:100%; height:100%; border:none;';
inner.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
document.body.appendChild(inner);
addEventListener('message', (event) => {
  if (event.source === window.parent) {
    if (event.origin !== EXPECTED_HOST_ORIGIN) return;
    if (event.data && event.data.method === 'ui/notifications/sandbox-resource-ready') {
      const { html, sandbox } = event.data.params;
      if (typeof sandbox === 'string') inner.setAttribute('sandbox', sandbox);
      if (typeof html === 'string') {
        const doc = inner.contentDocument || inner.contentWindow?.document;
        if (doc) { doc.open(); doc.write(html); doc.close(); } else inner.srcdoc = html;
      }
    } else if (inner.contentWindow) {
      inner.contentWindow.postMessage(event.data, '*');
    }
  } else if (event.source === inner.contentWindow) {
    if (event.origin !== OWN_ORIGIN) return;
    window.parent.postMessage(event.data, EXPECTED_HOST_ORIGIN);
  }
});
window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} }, EXPECTED_HOST_ORIGIN);
</script></body></html>`;

// The viewer's page with the CSP the project host sets.
export function withCsp(html) {
  return html.replace('<head>', `<head><meta http-equiv="Content-Security-Policy" content="${DEFAULT_CSP}">`);
}

// The host side of the browser test: a host page made with the MCP Apps
// SDK's AppBridge (bundled here with esbuild from the locked package), the
// viewer in a sandboxed iframe under the extension's default CSP.
import { build } from 'esbuild';

// The extension's default CSP for a resource that asks for no domains
// (SEP-1865, "Content Security Policy"): inline scripts and styles, data:
// images, no connections.
export const DEFAULT_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
  + "img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

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

export const HOST_PAGE = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>sagebox viewer test host</title><link rel="icon" href="data:,">
<style>body{margin:0;background:#eee} iframe{display:block;width:760px;height:600px;border:0;background:#fff}</style>
</head><body>
<iframe id="app" sandbox="allow-scripts"></iframe>
<script type="module">
import { AppBridge, PostMessageTransport } from '/bridge.js';
window.startViewer = async (html, result) => {
  const iframe = document.getElementById('app');
  const bridge = new AppBridge(null, { name: 'sagebox-viewer-test-host', version: '1' }, {});
  window.viewerLog = [];
  bridge.oninitialized = () => { window.viewerLog.push('initialized'); bridge.sendToolResult(result); };
  bridge.onsizechange = (p) => {
    window.viewerLog.push('size ' + p.width + 'x' + p.height);
    if (p.height) iframe.style.height = p.height + 'px'; // as a host does: the view asks for its height
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
};
</script></body></html>`;

// The viewer's page with the CSP a host sets (as a meta element: srcdoc has no headers).
export function withCsp(html) {
  return html.replace('<head>', `<head><meta http-equiv="Content-Security-Policy" content="${DEFAULT_CSP}">`);
}

/* The sagebox result viewer, an MCP App (io.modelcontextprotocol/ui,
 * SEP-1865): the host loads it in a sandboxed iframe and hands it the
 * result of run_sagemath, run_python or job_output over postMessage; this
 * file is its bridge to the host, and render.js draws the result.
 *
 * The view side of the bridge is written here (a few JSON-RPC messages:
 * ui/initialize, ui/notifications/initialized, tool-result, size-changed,
 * download-file, resource-teardown) rather than bundled from the SDK's App
 * class; the browser test (tests/viewer) drives it with the SDK's own
 * AppBridge.
 *
 * assemble.py puts limits.js, render.js, latex.js, html.js, svg.js,
 * scene.js, scene_draw.js, interact.js, export.js and this file, in that
 * order, into one strict-mode function of the page's one script of its
 * own. */

const PROTOCOL = '2026-01-26';
const root = document.getElementById('result');
let nextId = 1;
const pending = {};

function post(msg) {
	window.parent.postMessage(msg, '*');
}

function request(method, params) {
	const id = nextId++;
	post({ jsonrpc: '2.0', id: id, method: method, params: params });
	return new Promise((resolve, reject) => { pending[id] = { resolve: resolve, reject: reject }; });
}

function notify(method, params) {
	post({ jsonrpc: '2.0', method: method, params: params || {} });
}

/* A server's tool through the host (MCP Apps: tools/call from the view);
 * an answer that never comes is an error after LIMITS.toolCallMillis. */
function callTool(name, args) {
	let timer;
	return Promise.race([
		request('tools/call', { name: name, arguments: args }),
		new Promise((_, reject) => {
			timer = setTimeout(() => reject(new Error('the host did not answer in ' + LIMITS.toolCallMillis / 1000 + ' s')),
				LIMITS.toolCallMillis);
		}),
	]).finally(() => clearTimeout(timer));
}

function status(text) {
	root.textContent = '';
	root.appendChild(el('p', 'waiting', text));
}

let initialized = false, hostCapabilities = {};
let sizeQueued = false, lastWidth = 0, lastHeight = 0;

/* The size the host should give the frame, measured as the MCP Apps SDK's
 * App measures it (ext-apps 1.7.5, setupSizeChangedNotifications): the
 * document's own height laid out at max-content, not the frame's (the
 * frame's scrollHeight never drops below the frame, so a view whose content
 * shrank could never ask for less), and the window's width; once a frame,
 * on each change of <html> or <body>. Never taller than LIMITS.frameHeight
 * (the page scrolls inside the frame beyond it). */
function reportSize() {
	if (!initialized || sizeQueued) return; /* nothing but ui/initialize before the handshake ends */
	sizeQueued = true;
	requestAnimationFrame(() => {
		sizeQueued = false;
		const e = document.documentElement, was = e.style.height;
		e.style.height = 'max-content';
		const h = Math.min(Math.ceil(e.getBoundingClientRect().height), LIMITS.frameHeight);
		e.style.height = was;
		const w = Math.ceil(window.innerWidth);
		if (w === lastWidth && h === lastHeight) return;
		lastWidth = w;
		lastHeight = h;
		notify('ui/notifications/size-changed', { width: w, height: h });
	});
}

/* A file to the host's ui/download-file (an embedded resource), when the
 * host said it saves files; null otherwise (export.js then gives a link). */
function download(file) {
	if (!hostCapabilities.downloadFile) return null;
	const resource = { uri: 'file:///' + encodeURIComponent(file.name), mimeType: file.mime };
	if (file.text !== undefined) resource.text = file.text;
	else resource.blob = file.base64;
	return request('ui/download-file', { contents: [{ type: 'resource', resource: resource }] }).then((r) => {
		if (r && r.isError) throw new Error('the host did not save it');
	}, (e) => { throw new Error('the host refused: ' + ((e && e.message) || e)); });
}

function show(result) {
	try {
		renderResult(root, result, { resized: reportSize, callTool: callTool, download: download });
	} catch (e) {
		status('The viewer could not show this result: ' + ((e && e.message) || e));
	}
	reportSize();
}

window.addEventListener('message', (ev) => {
	if (ev.source !== window.parent) return; /* only the host speaks to the view */
	const m = ev.data;
	if (!m || m.jsonrpc !== '2.0') return;
	if (m.method === undefined) {
		const p = pending[m.id];
		if (p) {
			delete pending[m.id];
			if (m.error) p.reject(m.error);
			else p.resolve(m.result);
		}
		return;
	}
	if (m.method === 'ui/notifications/tool-result') show(m.params || {});
	else if (m.method === 'ui/notifications/tool-cancelled') status('The call was cancelled.');
	else if (m.method === 'ui/resource-teardown' || m.method === 'ping') post({ jsonrpc: '2.0', id: m.id, result: {} });
	else if (m.id !== undefined)
		post({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found: ' + m.method } });
});

if (window.ResizeObserver) {
	const sizes = new ResizeObserver(reportSize);
	sizes.observe(document.documentElement);
	sizes.observe(document.body);
}

request('ui/initialize', {
	protocolVersion: PROTOCOL,
	appInfo: { name: 'sagebox-viewer', version: '1' },
	appCapabilities: {},
}).then((r) => {
	hostCapabilities = (r && r.hostCapabilities) || {};
	notify('ui/notifications/initialized', {});
	initialized = true;
	reportSize();
}, (e) => status('The host refused the viewer: ' + (e && e.message)));

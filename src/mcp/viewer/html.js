/* An "html" item (Sage's html(...), tables): markup the model's code wrote,
 * so it must never run script, navigate, submit or load anything. Two
 * walls, each enough alone against what the other misses:
 *
 *   - DOMPurify (global DOMPurify) drops scripts, handlers, frames, forms,
 *     <base>, <meta>, <link>, and every URL but a data: image on an <img>
 *     (a javascript:, http: or data:text/html link, <form action>,
 *     <button formaction>, an inline <svg>'s <a>, a srcset);
 *   - the markup is shown in a frame of its own with an empty sandbox (no
 *     script, no form submission, no navigation but its own, no popups)
 *     and the CSP default-src 'none' (inline styles and data: images
 *     only), so a <style> restyles that frame alone and nothing it holds
 *     can lie over the rest of the result (a full-size invisible link over
 *     a 3D scene).
 *
 * A frame with an empty sandbox has an origin of its own, so the viewer
 * cannot read its height: a second copy is laid out in a shadow root of
 * the viewer, off screen, clipped, inert and hidden, to measure it, then
 * removed. That copy also loses every style that could fetch (it lives
 * under the viewer's CSP, not the frame's) or reach out of its shadow
 * root; the frame scrolls if the copies' heights differ. */

const HTML_FRAME_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'";
const HTML_TEXT_STYLE = 'margin:0;font:14px/1.45 system-ui,sans-serif;overflow-wrap:anywhere';
const HTML_FRAME_STYLE = ':root{color-scheme:light dark}html{margin:0}body{' + HTML_TEXT_STYLE + '}' +
	'img{max-width:100%;height:auto}';
const HTML_MEASURE_STYLE = '.body{display:flow-root;' + HTML_TEXT_STYLE + '}img{max-width:100%;height:auto}';
/* Attributes whose value a browser fetches or follows. */
const URL_ATTRIBUTES = new Set(['href', 'xlink:href', 'src', 'srcset', 'action', 'formaction', 'background',
	'poster', 'cite', 'longdesc', 'ping', 'data', 'codebase', 'lowsrc', 'dynsrc', 'manifest', 'usemap',
	'profile', 'itemtype', 'icon', 'archive', 'classid']);
const DATA_IMAGE = /^data:image\/(png|gif|jpeg|webp|bmp|svg\+xml)[;,]/i;
/* Styles the measuring copy drops: those that could fetch, and any that
 * could reach the shadow root's host (:host beats the host's own styles
 * when !important) to show the copy; a CSS escape or "host" anywhere is
 * enough, whatever it spelled. */
const MEASURE_UNSAFE_CSS = /url\s*\(|@import|image-set|image\s*\(|src\s*\(|\\|host|slotted|part\s*\(/i;

const PURIFY_CONFIG = {
	FORBID_TAGS: ['base', 'link', 'meta', 'form', 'iframe', 'frame', 'frameset', 'object', 'embed', 'portal',
		'noscript', 'template'],
	FORCE_BODY: true,   /* a leading <style> stays (it styles the item's own frame) */
	ALLOW_UNKNOWN_PROTOCOLS: false,
};

function urlHook(node, data) {
	if (!URL_ATTRIBUTES.has(data.attrName)) return;
	if (data.attrName === 'src' && node.nodeName === 'IMG' && DATA_IMAGE.test(data.attrValue)) return;
	data.keepAttr = false;
}

const htmlPurifier = DOMPurify(window);
htmlPurifier.addHook('uponSanitizeAttribute', urlHook);

const measurePurifier = DOMPurify(window);
measurePurifier.addHook('uponSanitizeAttribute', urlHook);
measurePurifier.addHook('uponSanitizeAttribute', (node, data) => {
	if (data.attrName === 'style' && MEASURE_UNSAFE_CSS.test(data.attrValue)) data.keepAttr = false;
});
measurePurifier.addHook('uponSanitizeElement', (node, data) => {
	if (data.tagName === 'style' && MEASURE_UNSAFE_CSS.test(node.textContent)) node.textContent = '';
});

function htmlFrameDocument(clean) {
	return '<!DOCTYPE html><html><head><meta charset="utf-8">' +
		'<meta http-equiv="Content-Security-Policy" content="' + HTML_FRAME_CSP + '">' +
		'<style>' + HTML_FRAME_STYLE + '</style></head><body>' + clean + '</body></html>';
}

/* The height the markup takes at width px, laid out in a detached shadow
 * root (styles scoped to it) that is never seen nor reachable. */
function measureHtml(fragment, width) {
	const host = el('div', 'html-measure');
	host.inert = true;
	host.setAttribute('aria-hidden', 'true');
	host.style.cssText = 'position:absolute;left:-100000px;top:0;visibility:hidden;contain:layout paint style;' +
		'pointer-events:none;width:' + width + 'px';
	const root = host.attachShadow({ mode: 'closed' });
	const style = el('style', null, HTML_MEASURE_STYLE);
	const body = el('div', 'body');
	body.appendChild(fragment);
	root.appendChild(style);
	root.appendChild(body);
	document.body.appendChild(host);
	const imgs = Array.from(body.querySelectorAll('img'));
	return Promise.all(imgs.map((i) => i.decode().catch(() => {}))).then(() => {
		const h = Math.ceil(body.getBoundingClientRect().height);
		host.remove();
		return h;
	});
}

function htmlItem(it, ctx) {
	const html = str(it.html);
	const clean = htmlPurifier.sanitize(html, PURIFY_CONFIG);
	const d = el('div', 'item html');
	const frame = el('iframe');
	frame.setAttribute('sandbox', '');
	frame.setAttribute('referrerpolicy', 'no-referrer');
	frame.title = 'HTML output';
	frame.srcdoc = htmlFrameDocument(clean);
	d.appendChild(frame);
	let width = -1;
	function fit() {
		const w = d.clientWidth;
		if (!w || w === width) return;
		width = w;
		const copy = measurePurifier.sanitize(html, Object.assign({ RETURN_DOM_FRAGMENT: true }, PURIFY_CONFIG));
		measureHtml(copy, w).then((h) => {
			frame.style.height = Math.max(16, Math.min(h + 2, LIMITS.htmlFrameHeight)) + 'px';
			ctx.resized();
		}, (e) => d.replaceWith(itemError('html', e)));
	}
	if (window.ResizeObserver) new ResizeObserver(fit).observe(d);
	requestAnimationFrame(fit);
	return d;
}

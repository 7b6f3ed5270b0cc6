/* Copying and saving what a result shows: under each formula a "Copy
 * LaTeX" button, under each figure "Save PNG" (its image block's bytes) or
 * "Save SVG", under each 3D scene "Save HTML" (a page that draws the scene
 * offline). Plain <button>s, so the keyboard and a screen reader reach
 * them; what each did is said in the bar's status line (a live region).
 *
 *   itemActions(kind, it, ctx) -> a bar of buttons, or null
 *
 * A view in a sandboxed frame cannot start a download itself, so a file
 * goes out through the host's ui/download-file (ctx.download: the MCP Apps
 * extension's request, when the host's capabilities name downloadFile);
 * from a host without it the button makes a data: link the user saves
 * ("Save link as").
 *
 * What is saved can be hostile (the model wrote it) and is opened later
 * outside the viewer, where no sandbox holds it:
 *   - the SVG is the one the viewer showed, sanitized again for a file a
 *     browser may open as a document (svg.js shows it as an image, which
 *     runs nothing; a document would): DOMPurify's SVG profile (no script,
 *     handler, foreignObject), no link but to #id or a data: raster
 *     image, no style that loads anything;
 *   - the 3D page carries the scene as data, JSON in a <script
 *     type="application/json"> with every "<" escaped (a label cannot end
 *     the element), checked by the same scene.js before three.js sees it,
 *     under a CSP that runs only the page's own two scripts, named by their
 *     SHA-256 (assemble.py computes them: EXPORT_SCRIPTS), and allows no
 *     origin at all. */

const SAVED_MIME = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

function utf8Base64(text) {
	const bytes = new TextEncoder().encode(text);
	let bin = '';
	for (let i = 0; i < bytes.length; i += 0x8000)
		bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
	return btoa(bin);
}

/* The clipboard API where the host's frame allows it (a frame needs the
 * clipboard-write permission from its parent, which most hosts do not
 * give), otherwise the older copy command on a selected text box. */
function copyText(text) {
	function byCommand() {
		const t = el('textarea');
		t.value = text;
		t.setAttribute('readonly', '');
		t.setAttribute('aria-hidden', 'true');
		t.style.cssText = 'position:fixed;left:0;top:0;width:1px;height:1px;opacity:0';
		const back = document.activeElement;
		document.body.appendChild(t);
		t.select();
		let ok = false;
		try {
			ok = document.execCommand('copy');
		} finally {
			t.remove();
			if (back && back.focus) back.focus();
		}
		if (!ok) throw new Error('the browser did not let the viewer copy');
	}
	if (navigator.clipboard && navigator.clipboard.writeText)
		return navigator.clipboard.writeText(text).catch(byCommand);
	return Promise.resolve().then(byCommand);
}

/* file: {name, mime, text} or {name, mime, base64}. Through the host when
 * it can save files; otherwise a data: link next to the button. */
function saveFile(bar, file, ctx) {
	const sent = ctx.download ? ctx.download(file) : null;
	if (sent) return sent.then(() => 'Sent ' + file.name + ' to the host to save.');
	let link = bar.querySelector('a.saved');
	if (!link) {
		link = el('a', 'saved');
		bar.insertBefore(link, bar.querySelector('.status'));
	}
	const mime = file.text !== undefined ? file.mime + ';charset=utf-8' : file.mime;
	link.href = 'data:' + mime + ';base64,' + (file.text !== undefined ? utf8Base64(file.text) : file.base64);
	link.download = file.name;
	link.textContent = file.name;
	link.focus();
	return Promise.resolve('To save ' + file.name + ', use the link\'s "Save link as".');
}

const SVG_LOADS = /url\s*\(\s*['"]?\s*(?!#)|@import|image-set|\\/i;
const SVG_LINK_OK = /^\s*#|^data:image\/(png|jpeg|gif|webp)[;,]/i;

const svgPurifier = DOMPurify(window);
svgPurifier.addHook('uponSanitizeAttribute', (node, data) => {
	if ((data.attrName === 'href' || data.attrName === 'xlink:href') && !SVG_LINK_OK.test(data.attrValue)) data.keepAttr = false;
	else if (SVG_LOADS.test(data.attrValue)) data.keepAttr = false;
});
svgPurifier.addHook('uponSanitizeElement', (node, data) => {
	if (data.tagName === 'style' && SVG_LOADS.test(node.textContent)) node.textContent = '';
});

/* The SVG file: checkSvg (svg.js) has accepted text already. */
function savedSvg(text) {
	const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
	/* Without its prolog (an <?xml?> or DOCTYPE is no part of the markup
	 * DOMPurify reads); the HTML parser gives SVG elements their case. */
	const body = svgPurifier.sanitize(new XMLSerializer().serializeToString(doc.documentElement),
		{ USE_PROFILES: { svg: true, svgFilters: true }, RETURN_DOM: true });
	const svg = body.firstElementChild;
	if (!svg || svg.localName !== 'svg') throw new Error('nothing of the SVG is left once it is sanitized');
	return '<?xml version="1.0" encoding="utf-8"?>\n' + new XMLSerializer().serializeToString(svg) + '\n';
}

const SCENE_PAGE_CSS = ':root{color-scheme:light dark}html,body{margin:0;height:100%;font:14px system-ui,sans-serif}' +
	'#view{position:relative;width:100%;height:100%}#view canvas{display:block;width:100%!important;' +
	'height:100%!important;touch-action:none}.hint{position:absolute;right:6px;bottom:4px;font-size:11px;' +
	'color:#6e6e73;pointer-events:none}';

/* The 3D scene as an HTML file that needs nothing but itself. */
function savedScene(scene) {
	const json = JSON.stringify(scene).replace(/</g, '\\u003c');
	const three = document.getElementById('three-js').textContent;
	const csp = "default-src 'none'; script-src '" + EXPORT_SCRIPTS.threeHash + "' '" + EXPORT_SCRIPTS.pageHash + "'; " +
		"style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";
	return '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
		'<meta http-equiv="Content-Security-Policy" content="' + csp + '">\n' +
		'<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
		'<title>sagebox 3D scene</title>\n<style>' + SCENE_PAGE_CSS + '</style>\n</head>\n<body>\n' +
		'<div id="view"><span class="hint">drag to turn · wheel to zoom</span></div>\n' +
		'<script type="application/json" id="scene">' + json + '</script>\n' +
		'<script>' + three + '</script>\n<script>' + EXPORT_SCRIPTS.page + '</script>\n</body>\n</html>\n';
}

/* The buttons an item gets: [label, what it says, () -> promise of a
 * status line]. */
function actionsFor(kind, it, ctx, bar) {
	const n = ++ctx.saved;
	if (kind === 'latex') {
		const tex = str(it.latex);
		return [['Copy LaTeX', 'Copy this formula\'s LaTeX source',
			() => copyText(tex).then(() => 'Copied the LaTeX source.')]];
	}
	if (kind === 'png') {
		const block = imageAt(ctx.content, it.image);
		if (!block) return [];
		const ext = (RASTER_MIME.exec(block.mimeType) || [null, 'png'])[1];
		return [['Save ' + ext.toUpperCase(), 'Save this figure as a ' + ext.toUpperCase() + ' file',
			() => saveFile(bar, { name: 'figure-' + n + '.' + ext, mime: SAVED_MIME[ext], base64: block.data }, ctx)]];
	}
	if (kind === 'svg') {
		const svg = str(it.svg);
		return [['Save SVG', 'Save this figure as an SVG file',
			() => saveFile(bar, { name: 'figure-' + n + '.svg', mime: 'image/svg+xml', text: savedSvg(svg) }, ctx)]];
	}
	if (kind === 'threejs') {
		const scene = it.scene;
		return [['Save HTML', 'Save this 3D scene as an HTML page that works offline',
			() => saveFile(bar, { name: 'scene-' + n + '.html', mime: 'text/html', text: savedScene(scene) }, ctx)]];
	}
	return [];
}

function itemActions(kind, it, ctx) {
	const bar = el('div', 'actions');
	bar.setAttribute('role', 'group');
	bar.setAttribute('aria-label', (KIND_NAMES[kind] || 'item') + ' actions');
	const status = el('span', 'status');
	status.setAttribute('role', 'status');
	const actions = actionsFor(kind, it, ctx, bar);
	if (!actions.length) return null;
	for (const [label, title, act] of actions) {
		const b = el('button', null, label);
		b.type = 'button';
		b.title = title;
		b.addEventListener('click', () => {
			status.textContent = '';
			let p;
			try {
				p = act();
			} catch (e) {
				p = Promise.reject(e);
			}
			p.then((said) => { status.textContent = said; },
				(e) => { status.textContent = label + ' failed: ' + String((e && e.message) || e).slice(0, 300); })
				.finally(ctx.resized);
		});
		bar.appendChild(b);
	}
	bar.appendChild(status);
	return bar;
}

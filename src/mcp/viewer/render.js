/* Drawing a run result into a container, as SageMathCell shows one: the
 * verdict, each displayed item in order, then stdout and stderr.
 *
 *   renderResult(container, result, hooks)
 *       result: a tools/call result (structuredContent, content);
 *       hooks.resized(): called when something drawn later changes size;
 *       hooks.callTool(name, args): a server's tool through the host (an
 *       interact's controls call interact_update);
 *       hooks.download(file): hands a file to the host to save (a promise),
 *       or null when the host cannot (export.js).
 *   renderItem(item, ctx) -> element or null
 *       one display item; ctx = newContext(content, hooks).
 *
 * One renderer per item kind (RENDERERS); an item drawn gets the buttons
 * that copy or save it (export.js) below it. A renderer throws on an item it
 * cannot draw, and renderItem puts the error in the item's place: one bad
 * item never keeps the later items, stdout or stderr from being shown. */

function el(tag, cls, text) {
	const e = document.createElement(tag);
	if (cls) e.className = cls;
	if (text !== undefined) e.textContent = text;
	return e;
}

function str(v) {
	return typeof v === 'string' ? v : '';
}

/* What a renderer that runs later (a 3D scene, an HTML item's frame)
 * reports its failure with: the same box renderItem would have made. */
function itemError(kind, e) {
	const d = el('div', 'item error');
	d.appendChild(el('strong', null, (KIND_NAMES[kind] || 'item') + ' not shown: '));
	d.appendChild(document.createTextNode(String((e && e.message) || e).slice(0, 500)));
	return d;
}

const KIND_NAMES = { text: 'text', latex: 'formula', html: 'HTML', png: 'figure', svg: 'SVG image', threejs: '3D scene', interact: 'interact' };

/* The index-th image content block: a PNG item names its block (the
 * bytes travel once), as a 3D scene names its picture. */
function imageAt(content, index) {
	if (!Number.isInteger(index) || index < 0) return null;
	const imgs = content.filter((b) => b && b.type === 'image' && typeof b.data === 'string');
	return imgs[index] || null;
}

function imageElement(data, mime, width, height, ctx) {
	const img = new Image();
	img.alt = 'figure';
	img.decoding = 'async';
	img.src = 'data:' + mime + ';base64,' + data;
	if (Number.isInteger(width) && width > 0) img.width = width;
	if (Number.isInteger(height) && height > 0) img.height = height;
	img.onload = ctx.resized;
	return img;
}

const RASTER_MIME = /^image\/(png|jpeg|gif|webp)$/;

function pngItem(it, ctx) {
	const block = imageAt(ctx.content, it.image);
	if (!block) throw new Error('its image block ' + it.image + ' is not in the result');
	const mime = RASTER_MIME.test(block.mimeType) ? block.mimeType : 'image/png';
	const d = el('div', 'item png');
	d.appendChild(imageElement(block.data, mime, it.width, it.height, ctx));
	return d;
}

const RENDERERS = {
	text: (it) => el('pre', 'item text', str(it.text)),
	latex: latexItem,    /* latex.js */
	html: htmlItem,      /* html.js */
	png: pngItem,
	svg: svgItem,        /* svg.js */
	threejs: sceneItem,  /* scene_draw.js */
	interact: interactItem, /* interact.js */
};

function newContext(content, hooks) {
	return {
		content: Array.isArray(content) ? content : [],
		resized: (hooks && hooks.resized) || function () {},
		/* callTool(name, args) -> a promise of the tool's result, through
		 * the host; absent when the host lets the view call nothing */
		callTool: hooks && hooks.callTool,
		download: (hooks && hooks.download) || function () { return null; },
		saved: 0,   /* items with buttons so far: the files' numbers */
		/* what is left of the per-result budgets (limits.js) */
		latexMillis: LIMITS.latexMillis,
		scenes: LIMITS.scenes,
	};
}

function renderItem(it, ctx) {
	const kind = it && typeof it.kind === 'string' ? it.kind : '';
	if (!Object.prototype.hasOwnProperty.call(RENDERERS, kind)) return null; /* a kind this viewer does not know */
	let node, bar;
	try {
		node = RENDERERS[kind](it, ctx);
		bar = itemActions(kind, it, ctx);
	} catch (e) {
		return itemError(kind, e);
	}
	if (!bar) return node;
	const d = el('div', 'result-item');
	d.appendChild(node);
	d.appendChild(bar);
	return d;
}

function verdict(sc, isError) {
	if (sc.timed_out) return ['timed out' + (typeof sc.timeout_seconds === 'number' ? ' after ' + sc.timeout_seconds + ' s' : ''), false];
	if (sc.cancelled) return ['cancelled', false];
	if (sc.error) return ['error: ' + String(sc.error), false];
	if (sc.signal) return ['killed by ' + String(sc.signal), false];
	if (sc.output_limit_exceeded) return ['output limit exceeded', false];
	if (typeof sc.exit_code === 'number' && sc.exit_code !== 0) return ['exit code ' + sc.exit_code, false];
	if (sc.ok === true) return ['ok' + (typeof sc.duration_ms === 'number' ? ' · ' + sc.duration_ms + ' ms' : ''), true];
	return [isError ? 'error' : 'done', !isError];
}

function renderResult(container, result, hooks) {
	result = result || {};
	const sc = result.structuredContent && typeof result.structuredContent === 'object' ? result.structuredContent : {};
	const ctx = newContext(result.content, hooks);
	container.textContent = '';
	const v = verdict(sc, result.isError);
	container.appendChild(el('div', 'verdict ' + (v[1] ? 'ok' : 'bad'), v[0]));
	if (Array.isArray(sc.display)) {
		for (const it of sc.display) {
			const n = renderItem(it, ctx);
			if (n) container.appendChild(n);
		}
	} else {
		/* A result without display items: its figures are image blocks. */
		for (const b of ctx.content)
			if (b && b.type === 'image' && typeof b.data === 'string' && RASTER_MIME.test(b.mimeType)) {
				const d = el('div', 'item png');
				d.appendChild(imageElement(b.data, b.mimeType, 0, 0, ctx));
				container.appendChild(d);
			}
	}
	if (sc.stdout === undefined && sc.stderr === undefined) {
		/* Not a run result (an error, a job's state): its text. */
		for (const b of ctx.content)
			if (b && b.type === 'text') container.appendChild(el('pre', 'text', str(b.text)));
	}
	if (str(sc.stdout)) container.appendChild(el('pre', 'stdout', sc.stdout));
	if (str(sc.stderr)) container.appendChild(el('pre', 'stderr', sc.stderr));
	const links = ctx.content.filter((b) => b && b.type === 'resource_link');
	if (links.length) {
		const l = el('div', 'links');
		for (const b of links) l.appendChild(el('span', 'link', str(b.name || b.uri) + ' (' + str(b.uri) + ')'));
		container.appendChild(l);
	}
}

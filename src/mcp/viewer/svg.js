/* An "svg" item, shown as an image, never as markup: an image's SVG runs
 * no script and loads nothing from the network. What an image can still
 * do is cost: it is drawn on the page's thread, and a few kilobytes of
 * <use> elements that each repeat the level below ten times ask for 10^10
 * shapes, which froze the host page for good. So the SVG is read first
 * (DOMParser, inert) and refused when drawing it has no bound the viewer
 * can count:
 *   - more than LIMITS.svgShapes elements once every <use> and url(#id)
 *     reference is expanded (a reference cycle is refused too);
 *   - filter effects, patterns and <foreignObject>, whose cost is not in
 *     the element count;
 *   - an SVG image inside it (an attribute or a style naming data:
 *     image/svg, or a style with CSS escapes that could spell one). */

const SVG_COSTLY = new Set(['filter', 'pattern', 'foreignobject']);
const SVG_NESTED = /data:\s*image\/svg/i;
const SVG_REF = /url\(\s*['"]?#([^'")\s]+)/g;

function svgRefs(e) {
	const refs = [];
	for (const a of e.attributes) {
		if ((a.localName === 'href') && a.value.trim().startsWith('#')) refs.push(a.value.trim().slice(1));
		for (const m of a.value.matchAll(SVG_REF)) refs.push(m[1]);
	}
	if (e.localName === 'style') for (const m of e.textContent.matchAll(SVG_REF)) refs.push(m[1]);
	return refs;
}

function checkSvg(text) {
	const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
	const err = doc.querySelector('parsererror');
	if (err) throw new Error('it is not well-formed SVG: ' + err.textContent.trim().split('\n')[0].slice(0, 200));
	const all = Array.from(doc.getElementsByTagName('*'));
	if (all.length > LIMITS.svgShapes) throw new Error('it has ' + all.length + ' elements; at most ' + LIMITS.svgShapes);
	const byId = new Map();
	for (const e of all) {
		const name = e.localName.toLowerCase();
		if (SVG_COSTLY.has(name) || name.startsWith('fe'))
			throw new Error('it uses <' + e.localName + '>, whose drawing cost the viewer cannot bound');
		const css = name === 'style' ? e.textContent : (e.getAttribute('style') || '');
		if (css.includes('\\')) throw new Error('a style in it has CSS escapes');
		for (const a of e.attributes)
			if (SVG_NESTED.test(a.value)) throw new Error('it holds an SVG image of its own');
		if (SVG_NESTED.test(css)) throw new Error('it holds an SVG image of its own');
		if (e.id) byId.set(e.id, e);
	}
	/* The shapes drawn, each reference counted as a copy of its target. */
	const memo = new Map(), open = new Set();
	function shapes(e) {
		if (memo.has(e)) return memo.get(e);
		if (open.has(e)) throw new Error('a <use> or url(#…) reference in it refers to itself');
		open.add(e);
		let n = 1;
		for (const c of e.children) n += shapes(c);
		for (const id of svgRefs(e)) {
			const t = byId.get(id);
			if (t) n += shapes(t);
		}
		if (n > LIMITS.svgShapes)
			throw new Error('it draws over ' + LIMITS.svgShapes + ' shapes once its <use> references are expanded');
		open.delete(e);
		memo.set(e, n);
		return n;
	}
	shapes(doc.documentElement);
}

function svgItem(it, ctx) {
	const svg = str(it.svg);
	checkSvg(svg);
	const d = el('div', 'item png svg');
	d.appendChild(imageElement(utf8Base64(svg), 'image/svg+xml', 0, 0, ctx));
	return d;
}

/* An "interact" item (Sage's @interact): its controls, drawn from the
 * declaration the server checked and rebuilt (core/interact.h), and its
 * rendering, the items the function displayed, drawn by the same renderers
 * as any result's. Moving a control calls the server's interact_update
 * through the host (tools/call over the bridge: ctx.callTool) and the
 * returned items replace the rendering.
 *
 * Everything the declaration holds (labels, options, defaults, a text
 * control's text) was written by the model's code: it reaches the page as
 * text nodes and input values only, never as markup. The viewer checks the
 * declaration's shape again (a result may come from anywhere the host got
 * it) and draws a control it does not know as a line saying so; the server
 * checks every value again before anything runs.
 *
 * One call at a time: a change while a call is in flight is kept, and only
 * the latest is sent when the call ends. A text box sends on Enter or when
 * it loses focus; a slider while it moves; a "manual" interact only when
 * its Update button is pressed. */

const INTERACT_MAX = { controls: 64, options: 1000, cells: 400, text: 10000 };

let interactSerial = 0;

function isNum(v) {
	return typeof v === 'number' && Number.isFinite(v);
}

/* A slider over numbers: its grid, or null when the declaration is not one. */
function sliderGrid(c) {
	if (!isNum(c.min) || !isNum(c.max) || !isNum(c.step) || !(c.step > 0) || c.max < c.min) return null;
	const steps = Math.round((c.max - c.min) / c.step);
	return steps <= 1e7 ? { min: c.min, step: c.step, steps: steps } : null;
}

/* The k-th value of a grid, as its declaration would write it (no
 * 0.30000000000000004). */
function gridValue(g, k) {
	return Number((g.min + k * g.step).toPrecision(12));
}

function gridIndex(g, v) {
	return isNum(v) ? Math.min(g.steps, Math.max(0, Math.round((v - g.min) / g.step))) : 0;
}

function optionList(c) {
	return Array.isArray(c.options) && c.options.length > 0 && c.options.length <= INTERACT_MAX.options &&
		c.options.every((o) => typeof o === 'string') ? c.options : null;
}

/* One range input over 0..last, and the text that names its value. */
function rangeInput(id, last, index, label) {
	const r = el('input');
	r.type = 'range';
	r.id = id;
	r.min = '0';
	r.max = String(last);
	r.step = '1';
	r.value = String(index);
	if (label) r.setAttribute('aria-label', label); /* (one slider: its <label> names it) */
	return r;
}

/* Each control kind: draw(c, id, changed) -> {node, value()} or throws. */
const CONTROL_KINDS = {
	slider: (c, id, changed) => sliderControl(c, id, changed, false),
	range_slider: (c, id, changed) => sliderControl(c, id, changed, true),
	selector: selectorControl,
	checkbox: (c, id, changed) => {
		const b = el('input');
		b.type = 'checkbox';
		b.id = id;
		b.checked = c.default === true;
		b.addEventListener('change', changed);
		return { node: b, value: () => b.checked };
	},
	input_box: (c, id, changed) => {
		const rows = Number.isInteger(c.rows) && c.rows > 1 ? Math.min(c.rows, 50) : 1;
		const b = el(rows > 1 ? 'textarea' : 'input');
		if (rows > 1) b.rows = rows;
		else b.type = 'text';
		b.id = id;
		b.value = typeof c.default === 'string' ? c.default : '';
		b.maxLength = INTERACT_MAX.text;
		if (Number.isInteger(c.width)) b.style.width = Math.min(c.width, 200) + 'ch';
		b.spellcheck = false;
		b.addEventListener('change', changed);
		return { node: b, value: () => b.value };
	},
	input_grid: gridControl,
	color_selector: (c, id, changed) => {
		const b = el('input');
		b.type = 'color';
		b.id = id;
		b.value = /^#[0-9a-fA-F]{6}$/.test(c.default) ? c.default.toLowerCase() : '#000000';
		b.addEventListener('change', changed);
		b.addEventListener('input', changed);
		return { node: b, value: () => b.value };
	},
	text_control: (c) => ({ node: el('p', 'interact-text', typeof c.text === 'string' ? c.text : ''), value: null }),
};

function sliderControl(c, id, changed, pair) {
	const opts = c.options !== undefined ? optionList(c) : null;
	const grid = opts ? null : sliderGrid(c);
	if (!opts && !grid) throw new Error('a slider with neither options nor a range');
	const last = opts ? opts.length - 1 : grid.steps;
	const name = (k) => (opts ? opts[k] : String(gridValue(grid, k)));
	const index = (v) => (opts ? (Number.isInteger(v) && v >= 0 && v <= last ? v : 0) : gridIndex(grid, v));
	const dflt = pair ? (Array.isArray(c.default) && c.default.length === 2 ? c.default : [undefined, undefined]) : [c.default];
	const box = el('span', 'interact-slider');
	const shown = el('output', 'interact-value');
	shown.htmlFor = id;
	const ranges = dflt.map((v, i) => rangeInput(i ? id + '-high' : id, last, pair && v === undefined ? i * last : index(v),
		pair ? (i ? 'high end' : 'low end') : null));
	const show = () => {
		const ks = ranges.map((r) => Number(r.value));
		shown.textContent = ks.map(name).join(' .. ');
		ranges.forEach((r, i) => r.setAttribute('aria-valuetext', name(ks[i])));
	};
	ranges.forEach((r, i) => {
		r.addEventListener('input', () => {
			/* a pair keeps low <= high: the other end follows */
			if (pair && Number(ranges[0].value) > Number(ranges[1].value)) ranges[1 - i].value = r.value;
			show();
			changed();
		});
		box.appendChild(r);
	});
	show();
	box.appendChild(shown);
	const valueOf = (r) => (opts ? Number(r.value) : gridValue(grid, Number(r.value)));
	return { node: box, value: () => (pair ? ranges.map(valueOf) : valueOf(ranges[0])) };
}

function selectorControl(c, id, changed) {
	const opts = optionList(c);
	if (!opts) throw new Error('a selector without options');
	const chosen = Number.isInteger(c.default) && c.default >= 0 && c.default < opts.length ? c.default : 0;
	if (c.buttons === true) {
		const group = el('span', 'interact-buttons');
		group.setAttribute('role', 'radiogroup');
		group.id = id;
		const radios = opts.map((o, k) => {
			const l = el('label');
			const r = el('input');
			r.type = 'radio';
			r.name = id;
			r.value = String(k);
			r.checked = k === chosen;
			r.addEventListener('change', changed);
			l.appendChild(r);
			l.appendChild(document.createTextNode(o));
			group.appendChild(l);
			return r;
		});
		return { node: group, value: () => Math.max(0, radios.findIndex((r) => r.checked)) };
	}
	const s = el('select');
	s.id = id;
	opts.forEach((o, k) => {
		const opt = el('option', null, o);
		opt.value = String(k);
		s.appendChild(opt);
	});
	s.value = String(chosen);
	s.addEventListener('change', changed);
	return { node: s, value: () => Number(s.value) };
}

function gridControl(c, id, changed) {
	const rows = c.rows, cols = c.cols;
	if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1 || rows * cols > INTERACT_MAX.cells)
		throw new Error('an input grid without its size');
	const t = el('table', 'interact-grid');
	t.id = id;
	const cells = [];
	for (let i = 0; i < rows; i++) {
		const tr = el('tr');
		cells.push([]);
		for (let j = 0; j < cols; j++) {
			const b = el('input');
			b.type = 'text';
			const d = Array.isArray(c.default) && Array.isArray(c.default[i]) ? c.default[i][j] : '';
			b.value = typeof d === 'string' ? d : '';
			b.maxLength = 1000;
			b.size = Number.isInteger(c.width) ? Math.min(c.width, 40) : 5;
			b.setAttribute('aria-label', 'row ' + (i + 1) + ', column ' + (j + 1));
			b.addEventListener('change', changed);
			const td = el('td');
			td.appendChild(b);
			tr.appendChild(td);
			cells[i].push(b);
		}
		t.appendChild(tr);
	}
	return { node: t, value: () => cells.map((r) => r.map((b) => b.value)) };
}

/* The items of a rendering (the first one, or an interact_update's), in
 * box; content: the result whose image blocks they name. */
function drawRendering(box, items, content, ctx) {
	const inner = newContext(content, { resized: ctx.resized, callTool: ctx.callTool, download: ctx.download });
	box.textContent = '';
	for (const it of Array.isArray(items) ? items : []) {
		if (it && it.kind === 'interact') continue; /* never one inside another */
		const n = renderItem(it, inner);
		if (n) box.appendChild(n);
	}
}

function interactItem(it, ctx) {
	const controls = Array.isArray(it.controls) ? it.controls.slice(0, INTERACT_MAX.controls) : [];
	const live = typeof it.session_id === 'string' && typeof it.id === 'string' && typeof ctx.callTool === 'function';
	const prefix = 'interact' + (++interactSerial) + '-';
	const d = el('div', 'item interact');
	const form = el('div', 'interact-controls');
	form.setAttribute('role', 'group');
	form.setAttribute('aria-label', 'Controls');
	const out = el('div', 'interact-output');
	out.setAttribute('aria-live', 'polite');
	const state = el('div', 'interact-state');
	state.setAttribute('role', 'status');
	let inFlight = false, again = false;
	const read = [];

	function values() {
		const v = {};
		for (const r of read) v[r.name] = r.value();
		return v;
	}

	function send() {
		if (inFlight) {
			again = true; /* the latest values go when this call ends */
			return;
		}
		inFlight = true;
		again = false;
		d.classList.add('busy');
		out.setAttribute('aria-busy', 'true');
		state.textContent = 'Updating…';
		ctx.callTool('interact_update', { session_id: it.session_id, interact_id: it.id, values: values() })
			.then((r) => {
				const sc = r && r.structuredContent && typeof r.structuredContent === 'object' ? r.structuredContent : {};
				if (r && r.isError) {
					const text = (Array.isArray(r.content) ? r.content : []).filter((b) => b && b.type === 'text')
						.map((b) => str(b.text)).join('\n');
					throw new Error(str(sc.error) || text || 'the update failed');
				}
				drawRendering(out, sc.display, r && r.content, ctx);
				if (str(sc.stderr)) out.appendChild(el('pre', 'stderr', sc.stderr));
				state.textContent = '';
			})
			.catch((e) => {
				state.textContent = '';
				state.appendChild(itemError('interact', e));
			})
			.finally(() => {
				inFlight = false;
				d.classList.remove('busy');
				out.removeAttribute('aria-busy');
				ctx.resized();
				if (again) send();
			});
	}

	const changed = () => { if (live && !it.manual) send(); };
	for (const c of controls) {
		const row = el('div', 'interact-control');
		const name = c && typeof c.name === 'string' ? c.name : '';
		const type = c && typeof c.type === 'string' ? c.type : '';
		const id = prefix + form.childElementCount;
		const label = el('label', null, c && typeof c.label === 'string' && c.label !== '' ? c.label : name);
		label.htmlFor = id;
		row.appendChild(label);
		let drawn = null;
		try {
			if (!name || !Object.prototype.hasOwnProperty.call(CONTROL_KINDS, type))
				throw new Error('a control this viewer does not know');
			drawn = CONTROL_KINDS[type](c, id, changed);
		} catch (e) {
			row.appendChild(el('span', 'interact-unknown', String(e.message)));
		}
		if (drawn) {
			/* a group (buttons, a grid, a range's two ends) is named by its label */
			if (!/^(INPUT|SELECT|TEXTAREA)$/.test(drawn.node.tagName)) drawn.node.setAttribute('aria-label', label.textContent);
			row.appendChild(drawn.node);
			if (drawn.value) read.push({ name: name, value: drawn.value });
			if (type === 'text_control') label.remove();
		}
		form.appendChild(row);
	}
	if (live && it.manual) {
		const b = el('button', 'interact-update', 'Update');
		b.type = 'button';
		b.addEventListener('click', send);
		form.appendChild(b);
	}
	if (!live) {
		for (const i of form.querySelectorAll('input, select, textarea')) i.disabled = true;
		form.appendChild(el('p', 'interact-note', str(it.note) ||
			'The controls need a session and a host that lets the viewer call sagebox.'));
	}
	d.appendChild(form);
	d.appendChild(state);
	d.appendChild(out);
	drawRendering(out, it.items, ctx.content, ctx);
	return d;
}

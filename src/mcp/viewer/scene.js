/* A "threejs" item's scene, checked before three.js sees any of it: the
 * keys Sage substitutes into ext_data/threejs/threejs_template.html
 * (options, bounds, lights, ambient, texts, points, lines, surfaces), each
 * with its type, every array a real array (a face given as {"length":
 * 2e7} would have three.js loop 2e7 times), every index inside its
 * vertices, every count within LIMITS. checkScene returns a new scene made
 * of checked values only, or throws an Error naming the first bad value
 * by its path ("surfaces[0].faces[12]: ..."). */

function badScene(path, want) {
	return new Error('the scene\'s ' + path + ' is not ' + want);
}

function isObject(v) {
	return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function num(v, path) {
	if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > LIMITS.sceneMagnitude)
		throw badScene(path, 'a finite number of magnitude at most ' + LIMITS.sceneMagnitude);
	return v;
}

function optNum(v, path, dflt, min, max) {
	if (v === undefined || v === null) return dflt;
	num(v, path);
	if (v < min || v > max) throw badScene(path, 'a number from ' + min + ' to ' + max);
	return v;
}

function bool(v, path, dflt) {
	if (v === undefined || v === null) return dflt;
	if (typeof v !== 'boolean') throw badScene(path, 'true or false');
	return v;
}

function list(v, path, max, what) {
	if (!Array.isArray(v)) throw badScene(path, 'an array' + (what ? ' of ' + what : ''));
	if (v.length > max) throw badScene(path, 'an array of at most ' + max + (what ? ' ' + what : ' entries'));
	return v;
}

function optList(v, path, max, what) {
	return v === undefined || v === null ? [] : list(v, path, max, what);
}

function text(v, path, max) {
	if (typeof v !== 'string' || v.length > max) throw badScene(path, 'a string of at most ' + max + ' characters');
	return v;
}

/* A CSS colour as Sage writes one: #rgb, #rrggbb, a name, rgb()/rgba(). */
const COLOR = /^(#[0-9a-f]{3,8}|[a-z]{1,32}|rgba?\([0-9., %]{1,60}\))$/i;

function color(v, path, dflt) {
	if ((v === undefined || v === null) && dflt !== undefined) return dflt;
	if (typeof v !== 'string' || !COLOR.test(v)) throw badScene(path, 'a colour (#rrggbb, a name or rgb())');
	return v;
}

function xyzObject(v, path) {
	if (!isObject(v)) throw badScene(path, 'an object {x, y, z}');
	return { x: num(v.x, path + '.x'), y: num(v.y, path + '.y'), z: num(v.z, path + '.z') };
}

function xyzArray(v, path) {
	list(v, path, 3, 'numbers');
	if (v.length !== 3) throw badScene(path, 'an array of 3 numbers');
	return [num(v[0], path + '[0]'), num(v[1], path + '[1]'), num(v[2], path + '[2]')];
}

function opacity(v, path) {
	return optNum(v, path, 1, 0, 1);
}

/* The labels' style (options.axesLabelsStyle entries, texts). */
function textStyle(v, path) {
	if (v === undefined || v === null) v = {};
	if (!isObject(v)) throw badScene(path, 'an object');
	let family = v.fontFamily;
	if (Array.isArray(family)) family = list(family, path + '.fontFamily', 8, 'names')
		.map((f, i) => text(f, path + '.fontFamily[' + i + ']', 64));
	else family = family === undefined || family === null ? ['monospace'] : [text(family, path + '.fontFamily', 64)];
	return {
		color: color(v.color, path + '.color', 'black'),
		fontSize: optNum(v.fontSize, path + '.fontSize', 14, 1, LIMITS.sceneFontPx),
		fontFamily: family,
		fontStyle: text(v.fontStyle === undefined || v.fontStyle === null ? 'normal' : v.fontStyle, path + '.fontStyle', 16),
		fontWeight: String(v.fontWeight === undefined || v.fontWeight === null ? 'normal' :
			typeof v.fontWeight === 'number' ? optNum(v.fontWeight, path + '.fontWeight', 400, 1, 1000) :
				text(v.fontWeight, path + '.fontWeight', 16)),
		opacity: opacity(v.opacity, path + '.opacity'),
	};
}

function checkOptions(o) {
	if (o === undefined || o === null) o = {};
	if (!isObject(o)) throw badScene('options', 'an object');
	let aspect = null; /* null: automatic */
	if (Array.isArray(o.aspectRatio)) {
		aspect = xyzArray(o.aspectRatio, 'options.aspectRatio');
		if (aspect.some((x) => x <= 0)) throw badScene('options.aspectRatio', 'three positive numbers');
	} else if (o.aspectRatio !== undefined && o.aspectRatio !== null && o.aspectRatio !== 'automatic') {
		throw badScene('options.aspectRatio', 'an array of 3 numbers or "automatic"');
	}
	let labels = null;
	if (Array.isArray(o.axesLabels)) {
		labels = list(o.axesLabels, 'options.axesLabels', 3, 'strings').map((s, i) => text(s, 'options.axesLabels[' + i + ']', 64));
		if (labels.length !== 3) throw badScene('options.axesLabels', 'an array of 3 strings');
	} else if (o.axesLabels !== undefined && o.axesLabels !== null && o.axesLabels !== false) {
		throw badScene('options.axesLabels', 'an array of 3 strings or false');
	}
	const styles = optList(o.axesLabelsStyle, 'options.axesLabelsStyle', 3, 'styles');
	let viewpoint = null;
	if (o.viewpoint !== undefined && o.viewpoint !== null && o.viewpoint !== false) {
		list(o.viewpoint, 'options.viewpoint', 2);
		if (o.viewpoint.length !== 2) throw badScene('options.viewpoint', '[[x, y, z], angle]');
		viewpoint = [xyzArray(o.viewpoint[0], 'options.viewpoint[0]'), num(o.viewpoint[1], 'options.viewpoint[1]')];
	}
	return {
		aspectRatio: aspect,
		frame: bool(o.frame, 'options.frame', true),
		axes: bool(o.axes, 'options.axes', false),
		axesLabels: labels,
		axesLabelsStyle: [0, 1, 2].map((i) => textStyle(styles[i], 'options.axesLabelsStyle[' + i + ']')),
		decimals: Math.round(optNum(o.decimals, 'options.decimals', 2, 0, 20)),
		projection: o.projection === 'orthographic' ? 'orthographic' : 'perspective',
		theme: o.theme === 'dark' ? 'dark' : 'light',
		viewpoint: viewpoint,
	};
}

/* An array whose entries count towards one of the scene's totals. */
function counted(v, path, budget, key, max, what) {
	list(v, path, max, what);
	budget[key] += v.length;
	if (budget[key] > max) throw badScene(path, 'within the scene\'s ' + max + ' ' + what + ' in all');
	return v;
}

function checkSurface(j, path, budget) {
	if (!isObject(j)) throw badScene(path, 'an object');
	const vs = counted(j.vertices, path + '.vertices', budget, 'vertices', LIMITS.sceneVertices, 'vertices');
	const positions = new Float64Array(vs.length * 3);
	vs.forEach((v, i) => {
		const p = xyzObject(v, path + '.vertices[' + i + ']');
		positions[3 * i] = p.x; positions[3 * i + 1] = p.y; positions[3 * i + 2] = p.z;
	});
	const fs = list(j.faces, path + '.faces', LIMITS.sceneTriangles, 'faces');
	const faces = fs.map((f, i) => {
		const fp = path + '.faces[' + i + ']';
		list(f, fp, LIMITS.sceneFaceCorners, 'vertex indices');
		if (f.length < 3) throw badScene(fp, 'an array of 3 to ' + LIMITS.sceneFaceCorners + ' vertex indices');
		budget.triangles += f.length - 2;
		if (budget.triangles > LIMITS.sceneTriangles)
			throw badScene(fp, 'within the scene\'s ' + LIMITS.sceneTriangles + ' triangles in all');
		return f.map((k, c) => {
			if (!Number.isInteger(k) || k < 0 || k >= vs.length)
				throw badScene(fp + '[' + c + ']', 'a vertex index from 0 to ' + (vs.length - 1));
			return k;
		});
	});
	let faceColors = null;
	if (j.faceColors !== undefined) {
		list(j.faceColors, path + '.faceColors', fs.length, 'colours');
		if (j.faceColors.length !== fs.length) throw badScene(path + '.faceColors', 'one colour per face');
		faceColors = j.faceColors.map((c, i) => color(c, path + '.faceColors[' + i + ']'));
	}
	return {
		positions: positions, faces: faces, faceColors: faceColors,
		color: color(j.color, path + '.color', '#6666ff'),
		opacity: opacity(j.opacity, path + '.opacity'),
		singleSide: bool(j.singleSide, path + '.singleSide', false),
		useFlatShading: bool(j.useFlatShading, path + '.useFlatShading', false),
		depthWrite: j.depthWrite === undefined ? null : bool(j.depthWrite, path + '.depthWrite', null),
		renderOrder: Math.round(optNum(j.renderOrder, path + '.renderOrder', 0, -1e6, 1e6)),
		showMeshGrid: bool(j.showMeshGrid, path + '.showMeshGrid', false),
		linewidth: optNum(j.linewidth, path + '.linewidth', 1, 0, 100),
	};
}

function checkLine(j, path, budget) {
	if (!isObject(j)) throw badScene(path, 'an object');
	const pts = counted(j.points, path + '.points', budget, 'linePoints', LIMITS.sceneLinePoints, 'line points');
	return {
		points: pts.map((p, i) => xyzArray(p, path + '.points[' + i + ']')),
		color: color(j.color, path + '.color', 'blue'),
		opacity: opacity(j.opacity, path + '.opacity'),
		linewidth: optNum(j.linewidth, path + '.linewidth', 1, 0, 100),
	};
}

function checkScene(s) {
	if (!isObject(s)) throw badScene('value', 'an object');
	const budget = { vertices: 0, triangles: 0, linePoints: 0 };
	const b = list(s.bounds, 'bounds', 2, 'corners');
	if (b.length !== 2) throw badScene('bounds', 'two corners [{x, y, z}, {x, y, z}]');
	const bounds = [xyzObject(b[0], 'bounds[0]'), xyzObject(b[1], 'bounds[1]')];
	for (const k of ['x', 'y', 'z'])
		if (bounds[0][k] > bounds[1][k]) throw badScene('bounds', 'a low corner then a high one');
	const ambient = s.ambient === undefined || s.ambient === null ? {} : s.ambient;
	if (!isObject(ambient)) throw badScene('ambient', 'an object {color}');
	return {
		options: checkOptions(s.options),
		bounds: bounds,
		lights: optList(s.lights, 'lights', LIMITS.sceneLights, 'lights').map((l, i) => {
			const p = xyzObject(l, 'lights[' + i + ']');
			return { x: p.x, y: p.y, z: p.z, color: color(l.color, 'lights[' + i + '].color', '#ffffff'),
				camera: l.parent === 'camera' };
		}),
		ambient: { color: color(ambient.color, 'ambient.color', '#404040') },
		texts: optList(s.texts, 'texts', LIMITS.sceneTexts, 'texts').map((t, i) => {
			const p = xyzObject(t, 'texts[' + i + ']');
			return Object.assign(textStyle(t, 'texts[' + i + ']'),
				{ text: text(t.text, 'texts[' + i + '].text', LIMITS.sceneTextChars), x: p.x, y: p.y, z: p.z });
		}),
		points: optList(s.points, 'points', LIMITS.scenePoints, 'points').map((j, i) => {
			if (!isObject(j)) throw badScene('points[' + i + ']', 'an object');
			return { point: xyzArray(j.point, 'points[' + i + '].point'), color: color(j.color, 'points[' + i + '].color', 'blue'),
				size: optNum(j.size, 'points[' + i + '].size', 5, 0, 1000), opacity: opacity(j.opacity, 'points[' + i + '].opacity') };
		}),
		lines: optList(s.lines, 'lines', LIMITS.sceneLinePoints, 'lines').map((j, i) => checkLine(j, 'lines[' + i + ']', budget)),
		surfaces: optList(s.surfaces, 'surfaces', LIMITS.sceneTriangles, 'surfaces')
			.map((j, i) => checkSurface(j, 'surfaces[' + i + ']', budget)),
	};
}

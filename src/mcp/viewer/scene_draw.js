/* A "threejs" item: the scene (checked by scene.js first) drawn as Sage's
 * three.js page draws it (sage/ext_data/threejs/threejs_template.html:
 * aspect, frame box, axes labels, lights, texts, points, lines, surfaces
 * with face colours and mesh grids), here with three.js's BufferGeometry,
 * turned with OrbitControls. Global THREE: vendor/three.min.js, the parts
 * of three.js vendor/make.mjs bundles. Drawn on the next frame, so the
 * rest of the result is on screen first; a scene that fails then is
 * replaced by its error, with its picture when the result has one. */

function sceneItem(it, ctx) {
	const s = checkScene(it.scene);
	if (ctx.scenes <= 0) throw new Error('a result shows at most ' + LIMITS.scenes + ' 3D scenes');
	ctx.scenes--;
	const d = el('div', 'item threejs');
	d.appendChild(el('span', 'hint', 'drag to turn · wheel to zoom'));
	requestAnimationFrame(() => {
		try {
			drawScene(d, s);
		} catch (e) {
			const err = itemError('threejs', e);
			const pic = imageAt(ctx.content, it.png);
			if (pic) err.appendChild(imageElement(pic.data, 'image/png', 0, 0, ctx));
			/* its Save HTML goes too: the saved page would fail as well */
			const box = d.parentNode && d.parentNode.classList.contains('result-item') ? d.parentNode : d;
			box.replaceWith(err);
		}
		ctx.resized();
	});
	return d;
}

/* The aspect multipliers and the box, as the template computes them. */
function sceneFrame(s) {
	const b = [Object.assign({}, s.bounds[0]), Object.assign({}, s.bounds[1])];
	for (const k of ['x', 'y', 'z'])
		if (b[0][k] === b[1][k]) { b[0][k] -= 1; b[1][k] += 1; }
	const range = { x: b[1].x - b[0].x, y: b[1].y - b[0].y, z: b[1].z - b[0].z };
	const a = s.options.aspectRatio ? s.options.aspectRatio.slice() : [1, 1, 1];
	const rRange = Math.hypot(range.x, range.y), auto = 2.5;
	if (range.z > auto * rRange && a[2] === 1) a[2] = auto * rRange / range.z;
	const mid = { x: (b[0].x + b[1].x) / 2, y: (b[0].y + b[1].y) / 2, z: (b[0].z + b[1].z) / 2 };
	const midToCorner = Math.hypot(a[0] * range.x, a[1] * range.y, a[2] * range.z) / 2;
	return { b: b, a: a, range: range, mid: mid, midToCorner: midToCorner };
}

function scaled(f, x, y, z) {
	return new THREE.Vector3(f.a[0] * x, f.a[1] * y, f.a[2] * z);
}

/* An object placed at the centre of its geometry (three.js's precision is
 * better near the origin, as the template does it). */
function centred(scene, geometry, object) {
	geometry.computeBoundingBox();
	const c = new THREE.Vector3();
	geometry.boundingBox.getCenter(c);
	geometry.translate(-c.x, -c.y, -c.z);
	object.position.copy(c);
	scene.add(object);
	return object;
}

function labelSprite(text, style, theme, scale) {
	let colour = style.color;
	if (theme === 'dark' && (colour === 'black' || colour === '#000000')) colour = 'white';
	const family = style.fontFamily.map((f) => (/\s/.test(f) ? '"' + f.replace(/"/g, '') + '"' : f)).join(', ');
	const font = [style.fontStyle, style.fontWeight, style.fontSize + 'px', family].join(' ');
	const canvas = document.createElement('canvas');
	const g = canvas.getContext('2d');
	const ratio = Math.max(1, Math.round(window.devicePixelRatio || 1));
	g.font = font;
	canvas.width = THREE.MathUtils.ceilPowerOfTwo(Math.max(1, g.measureText(text).width * ratio));
	canvas.height = THREE.MathUtils.ceilPowerOfTwo(style.fontSize * ratio);
	const w = canvas.width / ratio, h = canvas.height / ratio;
	g.scale(ratio, ratio);
	g.fillStyle = colour;
	g.font = font;
	g.textAlign = 'center';
	g.textBaseline = 'middle';
	g.fillText(text, w / 2, h / 2);
	const opts = { map: new THREE.CanvasTexture(canvas), sizeAttenuation: false, depthWrite: false };
	if (style.opacity < 1) opts.opacity = style.opacity;
	const sprite = new THREE.Sprite(new THREE.SpriteMaterial(opts));
	sprite.scale.set(scale * w, scale * h, 1);
	return sprite;
}

function axesLabels(scene, s, f, scale) {
	const o = s.options, al = o.axesLabels, st = o.axesLabelsStyle, b = f.b, d = o.decimals;
	const fixed = (x) => { const t = x.toFixed(d); return /^-0\.?0*$/.test(t) ? t.slice(1) : t; };
	const add = (text, x, y, z, style) => {
		const l = labelSprite(text, style, o.theme, scale);
		l.position.copy(scaled(f, x, y, z));
		scene.add(l);
	};
	let off = 0.1 * f.range.y;
	add(al[0] + '=' + fixed(f.mid.x), f.mid.x, b[1].y + off, b[0].z, st[0]);
	add(fixed(b[0].x), b[0].x, b[1].y + off, b[0].z, st[0]);
	add(fixed(b[1].x), b[1].x, b[1].y + off, b[0].z, st[0]);
	off = 0.1 * f.range.x;
	add(al[1] + '=' + fixed(f.mid.y), b[1].x + off, f.mid.y, b[0].z, st[1]);
	add(fixed(b[0].y), b[1].x + off, b[0].y, b[0].z, st[1]);
	add(fixed(b[1].y), b[1].x + off, b[1].y, b[0].z, st[1]);
	off = 0.1 * f.range.y;
	add(al[2] + '=' + fixed(f.mid.z), b[1].x, b[0].y - off, f.mid.z, st[2]);
	add(fixed(b[0].z), b[1].x, b[0].y - off, b[0].z, st[2]);
	add(fixed(b[1].z), b[1].x, b[0].y - off, b[1].z, st[2]);
}

function addSurface(scene, j, f, dark) {
	const g = new THREE.BufferGeometry();
	const pos = new Float32Array(j.positions.length);
	for (let i = 0; i < pos.length; i += 3) {
		pos[i] = f.a[0] * j.positions[i]; pos[i + 1] = f.a[1] * j.positions[i + 1]; pos[i + 2] = f.a[2] * j.positions[i + 2];
	}
	g.setAttribute('position', new THREE.Float32BufferAttribute(pos, 3));
	const index = [], triFace = [];
	j.faces.forEach((face, n) => {
		for (let k = 0; k < face.length - 2; k++) { index.push(face[0], face[k + 1], face[k + 2]); triFace.push(n); }
	});
	g.setIndex(index);
	g.computeVertexNormals();
	let geometry = g;
	if (j.faceColors) {
		/* A colour per face: each triangle's corners of their own. */
		geometry = g.toNonIndexed();
		const colours = new Float32Array(triFace.length * 9), c = new THREE.Color();
		triFace.forEach((n, t) => {
			c.set(j.faceColors[n]);
			for (let k = 0; k < 3; k++) colours.set([c.r, c.g, c.b], 9 * t + 3 * k);
		});
		geometry.setAttribute('color', new THREE.Float32BufferAttribute(colours, 3));
	}
	const transparent = j.opacity < 1;
	const mesh = new THREE.Mesh(geometry, new THREE.MeshPhongMaterial({
		side: j.singleSide ? THREE.FrontSide : THREE.DoubleSide, color: j.faceColors ? 'white' : j.color,
		vertexColors: !!j.faceColors, transparent: transparent, opacity: j.opacity, shininess: 20,
		flatShading: j.useFlatShading, depthWrite: j.depthWrite === null ? !transparent : j.depthWrite,
	}));
	if (transparent && j.renderOrder) mesh.renderOrder = j.renderOrder;
	centred(scene, geometry, mesh);
	if (j.showMeshGrid) {
		const grid = [], nudge = 0.0005 * f.range.z, p = j.positions;
		for (const face of j.faces)
			for (let k = 0; k < face.length; k++) {
				const u = face[k], v = face[(k + 1) % face.length], dz = u < v ? nudge : -nudge;
				grid.push(f.a[0] * p[3 * u], f.a[1] * p[3 * u + 1], f.a[2] * (p[3 * u + 2] + dz),
					f.a[0] * p[3 * v], f.a[1] * p[3 * v + 1], f.a[2] * (p[3 * v + 2] + dz));
			}
		const lg = new THREE.BufferGeometry();
		lg.setAttribute('position', new THREE.Float32BufferAttribute(grid, 3));
		centred(scene, lg, new THREE.LineSegments(lg, new THREE.LineBasicMaterial({ color: dark ? 'white' : 'black' })));
	}
}

function dotTexture(colour) {
	const canvas = document.createElement('canvas');
	canvas.width = canvas.height = 128;
	const g = canvas.getContext('2d');
	g.arc(64, 64, 64, 0, 2 * Math.PI);
	g.fillStyle = colour;
	g.fill();
	return new THREE.CanvasTexture(canvas);
}

function drawScene(d, s) {
	const o = s.options, f = sceneFrame(s), dark = o.theme === 'dark';
	const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
	renderer.setClearColor(dark ? 0 : 0xffffff, 1);
	d.appendChild(renderer.domElement);
	const scene = new THREE.Scene();
	const near = 0.01 * f.midToCorner, far = 100 * f.midToCorner;
	const camera = o.projection === 'orthographic' ? new THREE.OrthographicCamera(-1, 1, 1, -1, -far, far)
		: new THREE.PerspectiveCamera(45, 4 / 3, near, far);
	function aspect(r) {
		if (camera.isPerspectiveCamera) camera.aspect = r;
		else {
			camera.top = r > 1 ? f.midToCorner : f.midToCorner / r;
			camera.right = r > 1 ? f.midToCorner * r : f.midToCorner;
			camera.bottom = -camera.top;
			camera.left = -camera.right;
		}
		camera.updateProjectionMatrix();
	}
	camera.up.set(0, 0, 1);
	const mid = scaled(f, f.mid.x, f.mid.y, f.mid.z);
	const offset = new THREE.Vector3(f.a[0] * f.range.x, f.a[1] * f.range.y, f.a[2] * f.range.z);
	if (o.viewpoint) {
		const axis = new THREE.Vector3().fromArray(o.viewpoint[0]).normalize();
		const q = new THREE.Quaternion().setFromAxisAngle(axis, o.viewpoint[1] * Math.PI / 180).invert();
		offset.set(0, 0, offset.length()).applyQuaternion(q);
	}
	camera.position.copy(mid).add(offset);
	if (o.frame)
		scene.add(new THREE.Box3Helper(new THREE.Box3(scaled(f, f.b[0].x, f.b[0].y, f.b[0].z),
			scaled(f, f.b[1].x, f.b[1].y, f.b[1].z)), dark ? 'white' : 'black'));
	const labelScale = o.projection === 'orthographic' ? f.midToCorner / 256 : 1 / 625;
	if (o.axesLabels) axesLabels(scene, s, f, labelScale);
	if (o.axes) scene.add(new THREE.AxesHelper(Math.min(f.a[0] * f.b[1].x, f.a[1] * f.b[1].y, f.a[2] * f.b[1].z)));
	/* Sage's intensities (1) are for three.js's lights before r155, which
	 * scaled them by pi; the physically based lights since need the pi. */
	for (const l of s.lights) {
		const light = new THREE.DirectionalLight(l.color, Math.PI);
		light.position.copy(scaled(f, l.x, l.y, l.z));
		if (l.camera) { light.target.position.copy(mid); scene.add(light.target); camera.add(light); }
		else scene.add(light);
	}
	scene.add(camera);
	scene.add(new THREE.AmbientLight(s.ambient.color, Math.PI));
	for (const t of s.texts) {
		const l = labelSprite(t.text, t, o.theme, labelScale);
		l.position.copy(scaled(f, t.x, t.y, t.z));
		scene.add(l);
	}
	for (const j of s.points) {
		const g = new THREE.BufferGeometry().setFromPoints([scaled(f, j.point[0], j.point[1], j.point[2])]);
		centred(scene, g, new THREE.Points(g, new THREE.PointsMaterial({ size: camera.isOrthographicCamera ? j.size : j.size / 100,
			map: dotTexture(j.color), transparent: j.opacity < 1, opacity: j.opacity, alphaTest: 0.1 })));
	}
	for (const j of s.lines) {
		const g = new THREE.BufferGeometry().setFromPoints(j.points.map((v) => scaled(f, v[0], v[1], v[2])));
		centred(scene, g, new THREE.Line(g, new THREE.LineBasicMaterial({ color: j.color, linewidth: j.linewidth,
			transparent: j.opacity < 1, opacity: j.opacity })));
	}
	for (const j of s.surfaces) addSurface(scene, j, f, dark);

	const controls = new THREE.OrbitControls(camera, renderer.domElement);
	controls.target.copy(mid);
	const render = () => renderer.render(scene, camera);
	controls.addEventListener('change', render);
	let size = '';
	function fit() {
		const w = d.clientWidth || 480, h = d.clientHeight || 360;
		if (w + 'x' + h === size) return;
		size = w + 'x' + h;
		renderer.setPixelRatio(window.devicePixelRatio || 1);
		renderer.setSize(w, h, false);
		aspect(w / h);
		render();
	}
	if (window.ResizeObserver) new ResizeObserver(fit).observe(d);
	controls.update();
	fit();
}

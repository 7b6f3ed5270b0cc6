/* The sagebox result viewer, an MCP App (io.modelcontextprotocol/ui,
 * SEP-1865). The host loads it in a sandboxed iframe and hands it the
 * result of run_sagemath, run_python or job_output over postMessage; it
 * shows the result as SageMathCell would. Globals: THREE and its
 * OrbitControls (Debian's libjs-three), katex (Debian's libjs-katex).
 *
 * The view side of the host bridge is written here (a few JSON-RPC
 * messages: ui/initialize, ui/notifications/initialized, tool-input,
 * tool-result, size-changed, resource-teardown) rather than bundled from
 * the SDK's App class, so the server's build needs no npm; the browser test
 * (tests/viewer) drives it with the SDK's own AppBridge. */
(function () {
	'use strict';
	var PROTOCOL = '2026-01-26';
	var root = document.getElementById('result');
	var nextId = 1, pending = {};

	/* ---- the bridge to the host (the parent window) */
	function post(msg) { window.parent.postMessage(msg, '*'); }
	function request(method, params) {
		var id = nextId++;
		post({ jsonrpc: '2.0', id: id, method: method, params: params });
		return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
	}
	function notify(method, params) { post({ jsonrpc: '2.0', method: method, params: params || {} }); }

	window.addEventListener('message', function (ev) {
		if (ev.source !== window.parent) return; /* only the host speaks to the view */
		var m = ev.data;
		if (!m || m.jsonrpc !== '2.0') return;
		if (m.method === undefined) {
			var p = pending[m.id];
			if (p) { delete pending[m.id]; if (m.error) p.reject(m.error); else p.resolve(m.result); }
			return;
		}
		if (m.method === 'ui/notifications/tool-result') show(m.params || {});
		else if (m.method === 'ui/notifications/tool-cancelled') status('The call was cancelled.');
		else if (m.method === 'ui/resource-teardown' || m.method === 'ping') post({ jsonrpc: '2.0', id: m.id, result: {} });
		else if (m.id !== undefined)
			post({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found: ' + m.method } });
	});

	var lastSize = '', initialized = false;
	function reportSize() {
		if (!initialized) return; /* nothing but ui/initialize before the handshake ends */
		var w = Math.ceil(document.documentElement.scrollWidth), h = Math.ceil(document.documentElement.scrollHeight);
		if (w + 'x' + h === lastSize) return;
		lastSize = w + 'x' + h;
		notify('ui/notifications/size-changed', { width: w, height: h });
	}
	if (window.ResizeObserver) new ResizeObserver(reportSize).observe(document.documentElement);

	request('ui/initialize', {
		protocolVersion: PROTOCOL,
		appInfo: { name: 'sagebox-viewer', version: '1' },
		appCapabilities: {}
	}).then(function () {
		notify('ui/notifications/initialized', {});
		initialized = true;
		reportSize();
	}, function (e) { status('The host refused the viewer: ' + (e && e.message)); });

	/* ---- drawing a result */
	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;
		return e;
	}
	function status(text) { root.textContent = ''; root.appendChild(el('p', 'waiting', text)); }

	function verdict(sc, isError) {
		if (sc.timed_out) return ['timed out' + (sc.timeout_seconds ? ' after ' + sc.timeout_seconds + ' s' : ''), false];
		if (sc.cancelled) return ['cancelled', false];
		if (sc.error) return ['error: ' + sc.error, false];
		if (sc.signal) return ['killed by ' + sc.signal, false];
		if (sc.output_limit_exceeded) return ['output limit exceeded', false];
		if (typeof sc.exit_code === 'number' && sc.exit_code !== 0) return ['exit code ' + sc.exit_code, false];
		if (sc.ok === true) return ['ok' + (typeof sc.duration_ms === 'number' ? ' · ' + sc.duration_ms + ' ms' : ''), true];
		return [isError ? 'error' : 'done', !isError];
	}

	function latexItem(tex) {
		var d = el('div', 'item latex');
		try {
			katex.render(tex, d, { displayMode: true, throwOnError: false, output: 'htmlAndMathml' });
		} catch (e) {
			d.textContent = '$$ ' + tex + ' $$';
		}
		return d;
	}

	function pngItem(data, mime, width, height) {
		var d = el('div', 'item png'), img = new Image();
		img.alt = 'figure';
		img.src = 'data:' + (mime || 'image/png') + ';base64,' + data;
		if (width) img.width = width;
		if (height) img.height = height;
		img.onload = reportSize;
		d.appendChild(img);
		return d;
	}

	function svgItem(svg) {
		/* As an image, not as markup: an SVG's scripts must not run here. */
		return pngItem(btoa(unescape(encodeURIComponent(svg))), 'image/svg+xml');
	}

	function htmlItem(html) {
		/* Sage's HTML output (html(...), tables): shown without its scripts. */
		var d = el('div', 'item html');
		var doc = new DOMParser().parseFromString(html, 'text/html');
		doc.querySelectorAll('script, iframe, object, embed, link, meta').forEach(function (n) { n.remove(); });
		doc.querySelectorAll('*').forEach(function (n) {
			for (var i = n.attributes.length - 1; i >= 0; i--)
				if (/^on/i.test(n.attributes[i].name)) n.removeAttribute(n.attributes[i].name);
		});
		while (doc.body.firstChild) d.appendChild(doc.body.firstChild);
		return d;
	}

	/* The index-th image content block: a PNG item names its block (the
	 * bytes travel once), as a 3D scene names its picture. */
	function imageAt(content, index) {
		var imgs = content.filter(function (b) { return b.type === 'image'; });
		return imgs[index] || {};
	}

	function item(it, content) {
		switch (it && it.kind) {
		case 'text': return el('pre', 'item text', it.text);
		case 'latex': return latexItem(it.latex);
		case 'html': return htmlItem(it.html);
		case 'png': return pngItem(imageAt(content, it.image).data, it.mimeType, it.width, it.height);
		case 'svg': return svgItem(it.svg);
		case 'threejs': return sceneItem(it.scene);
		default: return null;
		}
	}

	function show(result) {
		var sc = result.structuredContent || {}, content = result.content || [];
		root.textContent = '';
		var v = verdict(sc, result.isError);
		root.appendChild(el('div', 'verdict ' + (v[1] ? 'ok' : 'bad'), v[0]));
		if (Array.isArray(sc.display)) {
			sc.display.forEach(function (it) { var n = item(it, content); if (n) root.appendChild(n); });
		} else {
			/* A result without display items: its figures are image blocks. */
			content.forEach(function (b) {
				if (b.type === 'image') root.appendChild(pngItem(b.data, b.mimeType));
			});
		}
		if (sc.stdout === undefined && sc.stderr === undefined) {
			/* Not a run result (an error, a job's state): its text. */
			content.forEach(function (b) { if (b.type === 'text') root.appendChild(el('pre', 'text', b.text)); });
		}
		if (sc.stdout) root.appendChild(el('pre', 'stdout', sc.stdout));
		if (sc.stderr) root.appendChild(el('pre', 'stderr', sc.stderr));
		var links = content.filter(function (b) { return b.type === 'resource_link'; });
		if (links.length) {
			var l = el('div', 'links');
			links.forEach(function (b) { l.appendChild(el('span', 'link', (b.name || b.uri) + ' (' + b.uri + ')')); });
			root.appendChild(l);
		}
		reportSize();
	}

	/* ---- a three.js scene as Sage's threejs viewer draws it
	 * (sage/ext_data/threejs/threejs_template.html, for three.js r111). */
	function sceneItem(s) {
		var d = el('div', 'item threejs');
		d.appendChild(el('span', 'hint', 'drag to turn · wheel to zoom'));
		var opts = s.options || {}, b = s.bounds, ar = opts.aspectRatio || [1, 1, 1];
		var a = [ar[0], ar[1], ar[2]];
		['x', 'y', 'z'].forEach(function (k) { if (b[0][k] === b[1][k]) { b[0][k] -= 1; b[1][k] += 1; } });
		var xr = b[1].x - b[0].x, yr = b[1].y - b[0].y, zr = b[1].z - b[0].z;
		var auto = 2.5, rr = Math.max(xr, yr, zr);
		if (opts.aspectRatio === undefined || opts.aspectRatio === null || ar[0] === 'automatic') a = [1, 1, 1];
		if (xr > auto * rr || yr > auto * rr || zr > auto * rr) a = [1, 1, 1];
		var mid = new THREE.Vector3(a[0] * (b[0].x + b[1].x) / 2, a[1] * (b[0].y + b[1].y) / 2, a[2] * (b[0].z + b[1].z) / 2);
		var corner = Math.sqrt(a[0] * a[0] * xr * xr + a[1] * a[1] * yr * yr + a[2] * a[2] * zr * zr) / 2;
		var renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
		renderer.setClearColor(opts.theme === 'dark' ? 0 : 0xffffff, 1);
		d.appendChild(renderer.domElement);
		var scene = new THREE.Scene();
		var camera = new THREE.PerspectiveCamera(45, 4 / 3, 0.01 * corner, 100 * corner);
		camera.up.set(0, 0, 1);
		camera.position.copy(mid).add(new THREE.Vector3(a[0] * xr, a[1] * yr, a[2] * zr));
		if (opts.frame !== false) {
			var box = new THREE.Geometry();
			box.vertices.push(new THREE.Vector3(a[0] * b[0].x, a[1] * b[0].y, a[2] * b[0].z));
			box.vertices.push(new THREE.Vector3(a[0] * b[1].x, a[1] * b[1].y, a[2] * b[1].z));
			var boxMesh = new THREE.Line(box);
			scene.add(new THREE.BoxHelper(boxMesh, opts.theme === 'dark' ? 'white' : 'black'));
		}
		(s.lights || []).forEach(function (l) {
			var light = new THREE.DirectionalLight(l.color, 1);
			light.position.set(a[0] * l.x, a[1] * l.y, a[2] * l.z);
			if (l.parent === 'camera') { light.target.position.copy(mid); scene.add(light.target); camera.add(light); }
			else scene.add(light);
		});
		scene.add(camera);
		scene.add(new THREE.AmbientLight((s.ambient || { color: '#404040' }).color, 1));
		function centred(geometry, mesh) {
			var c = new THREE.Vector3();
			geometry.computeBoundingBox();
			geometry.boundingBox.getCenter(c);
			geometry.translate(-c.x, -c.y, -c.z);
			mesh.position.copy(c);
			scene.add(mesh);
		}
		(s.surfaces || []).forEach(function (j) {
			var g = new THREE.Geometry(), fc = 'faceColors' in j;
			j.vertices.forEach(function (v) { g.vertices.push(new THREE.Vector3(a[0] * v.x, a[1] * v.y, a[2] * v.z)); });
			j.faces.forEach(function (f, i) {
				for (var k = 0; k < f.length - 2; k++) {
					var face = new THREE.Face3(f[0], f[k + 1], f[k + 2]);
					if (fc) face.color.set(j.faceColors[i]);
					g.faces.push(face);
				}
			});
			g.computeVertexNormals();
			var transparent = j.opacity < 1;
			centred(g, new THREE.Mesh(g, new THREE.MeshPhongMaterial({
				side: j.singleSide ? THREE.FrontSide : THREE.DoubleSide, color: fc ? 'white' : j.color,
				vertexColors: fc ? THREE.FaceColors : THREE.NoColors, transparent: transparent, opacity: j.opacity,
				shininess: 20, flatShading: !!j.useFlatShading,
				depthWrite: 'depthWrite' in j ? j.depthWrite : !transparent })));
		});
		(s.lines || []).forEach(function (j) {
			var g = new THREE.Geometry();
			j.points.forEach(function (v) { g.vertices.push(new THREE.Vector3(a[0] * v[0], a[1] * v[1], a[2] * v[2])); });
			centred(g, new THREE.Line(g, new THREE.LineBasicMaterial({ color: j.color, linewidth: j.linewidth,
				transparent: j.opacity < 1, opacity: j.opacity })));
		});
		(s.points || []).forEach(function (j) {
			var g = new THREE.Geometry(), v = j.point;
			g.vertices.push(new THREE.Vector3(a[0] * v[0], a[1] * v[1], a[2] * v[2]));
			centred(g, new THREE.Points(g, new THREE.PointsMaterial({ color: j.color, size: (j.size || 5) / 100,
				transparent: j.opacity < 1, opacity: j.opacity })));
		});
		var controls = new THREE.OrbitControls(camera, renderer.domElement);
		controls.target.copy(mid);
		function render() { renderer.render(scene, camera); }
		controls.addEventListener('change', render);
		function fit() {
			var w = d.clientWidth || 480, h = d.clientHeight || 360;
			renderer.setPixelRatio(window.devicePixelRatio || 1);
			renderer.setSize(w, h, false);
			camera.aspect = w / h;
			camera.updateProjectionMatrix();
			render();
		}
		if (window.ResizeObserver) new ResizeObserver(fit).observe(d);
		requestAnimationFrame(function () { controls.update(); fit(); });
		return d;
	}
}());

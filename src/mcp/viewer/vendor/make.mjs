// Makes the viewer's vendored files from the npm packages pinned in
// package-lock.json (npm ci checks each tarball against its sha512 there):
//
//   node make.mjs OUTDIR
//
// KaTeX's and DOMPurify's own minified builds are copied as they are;
// three.js ships ES modules only, so the parts the viewer draws with (and
// OrbitControls) are bundled by the pinned esbuild into one script that
// sets the global THREE (the viewer is one inline-scripted page: no
// modules, no network). SHA256SUMS lists every file: the build refuses a
// file that does not match it (assemble.py), and tests/viewer runs this
// again and compares, so what is committed is what the lock gives.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node make.mjs OUTDIR');
  process.exit(2);
}
const pkg = (name, file) => path.join(here, 'node_modules', name, file);

// What viewer.js takes from three.js: one name a line, so a new need is a
// one-line change here and the bundle keeps nothing else.
const THREE_NAMES = [
  'AmbientLight', 'AxesHelper', 'Box3', 'Box3Helper', 'BufferGeometry', 'CanvasTexture', 'Color',
  'DirectionalLight', 'DoubleSide', 'Float32BufferAttribute', 'FrontSide', 'Line', 'LineBasicMaterial',
  'LineSegments', 'MathUtils', 'Mesh', 'MeshPhongMaterial', 'OrthographicCamera', 'PerspectiveCamera', 'Points',
  'PointsMaterial', 'Quaternion', 'Scene', 'Sprite', 'SpriteMaterial', 'Vector3', 'WebGLRenderer',
];

async function threeBundle() {
  const r = await build({
    stdin: {
      contents: `export { ${THREE_NAMES.join(', ')} } from 'three';\n` +
        "export { OrbitControls } from 'three/addons/controls/OrbitControls.js';\n",
      resolveDir: here,
    },
    bundle: true, format: 'iife', globalName: 'THREE', platform: 'browser', target: 'es2020',
    minify: true, legalComments: 'inline', write: false, logLevel: 'silent',
  });
  return r.outputFiles[0].contents;
}

const files = {
  'katex.min.js': readFileSync(pkg('katex', 'dist/katex.min.js')),
  'katex.min.css': readFileSync(pkg('katex', 'dist/katex.min.css')),
  'purify.min.js': readFileSync(pkg('dompurify', 'dist/purify.min.js')),
  'three.min.js': Buffer.from(await threeBundle()),
  'LICENSE.katex': readFileSync(pkg('katex', 'LICENSE')),
  'LICENSE.three': readFileSync(pkg('three', 'LICENSE')),
  'LICENSE.dompurify': readFileSync(pkg('dompurify', 'LICENSE')),
};
const versions = Object.fromEntries(['katex', 'three', 'dompurify']
  .map((n) => [n, JSON.parse(readFileSync(pkg(n, 'package.json'), 'utf8')).version]));
files['VERSIONS'] = Buffer.from(Object.entries(versions).map(([n, v]) => `${n} ${v}\n`).join(''));

mkdirSync(out, { recursive: true });
let sums = '';
for (const [name, data] of Object.entries(files)) {
  writeFileSync(path.join(out, name), data);
  sums += `${createHash('sha256').update(data).digest('hex')}  ${name}\n`;
}
writeFileSync(path.join(out, 'SHA256SUMS'), sums);

/* The script of a 3D scene saved as a page of its own (export.js, "Save
 * HTML"), which assemble.py makes from limits.js, scene.js, scene_draw.js
 * and this file, not part of the viewer: the page's scene is its JSON data
 * block, checked as the viewer checks it (the file may have been edited),
 * then drawn as the viewer draws it, with the page's other script,
 * three.js. */
const view = document.getElementById('view');
try {
	drawScene(view, checkScene(JSON.parse(document.getElementById('scene').textContent)));
} catch (e) {
	view.textContent = 'The scene could not be drawn: ' + String((e && e.message) || e);
}

/* What one result may cost the viewer, in one table. The viewer shares its
 * host page's thread in the simplest host setup (a sandboxed srcdoc frame
 * is in the host's process), so a renderer that loops or grows without
 * bound freezes the chat, not just the viewer: every renderer works within
 * these, and an item over them is shown as an error in its place. The
 * display items already come capped by the server (32 items, 256 KiB each,
 * 320 KiB in all: core/figure.c); these bound the work per byte. */
const LIMITS = {
	/* The frame height the viewer asks its host for; taller content scrolls
	 * inside the frame (a 33,554,432 px request is not a layout a host
	 * should be asked to make). */
	frameHeight: 12000,

	/* KaTeX. maxExpand bounds macro expansions per formula (\edef counts
	 * since KaTeX 0.16.10: CVE-2024-28243); maxSize (em) bounds every size
	 * a formula asks for (\rule{1em}{2000000em} becomes 25 em tall). */
	latexChars: 16384,
	latexMaxExpand: 1000,
	latexMaxSize: 25,
	/* Wall time for all formulas of one result; those after it is spent
	 * are shown as their source. */
	latexMillis: 2000,

	/* An SVG item: elements drawn once every <use> and url(#id) is
	 * expanded (a Sage or matplotlib figure draws a few thousand). */
	svgShapes: 20000,

	/* An HTML item taller than this scrolls in its own frame. */
	htmlFrameHeight: 1600,

	/* 3D scenes: each is a WebGL context (browsers keep ~16 alive) and
	 * its JSON is checked against these before three.js sees any of it. */
	scenes: 8,
	sceneVertices: 131072,    /* surface vertices, all surfaces */
	sceneTriangles: 262144,   /* after splitting faces into triangles */
	sceneFaceCorners: 4096,   /* one face (a polygon) */
	sceneLinePoints: 131072,  /* all lines */
	scenePoints: 16384,
	sceneLights: 16,
	sceneTexts: 1024,         /* labels and text3d */
	sceneTextChars: 256,
	sceneMagnitude: 1e12,     /* |coordinate| */
	/* Labels are drawn on canvases: font sizes in px. */
	sceneFontPx: 96,

	/* A tool the view calls through the host (an interact's update): its
	 * answer after this is an error, and the controls work again. The
	 * server's own limit on a call is longer than any run's timeout. */
	toolCallMillis: 330000,
};

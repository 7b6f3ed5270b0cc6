/* A "latex" item, typeset by KaTeX (global katex), as a display formula
 * that fits the view's width: KaTeX breaks lines only in inline mode, and
 * only after a top-level relation or binary operator, so the formula is
 * set in inline mode with \displaystyle (display-sized fractions,
 * integrals and sums); a part between two break points that is still
 * wider than the view scrolls sideways in the item's own box
 * (viewer.css), never past the view's edge. Its budget: the source
 * is at most LIMITS.latexChars, KaTeX's maxExpand and maxSize are set (a
 * macro bomb stops at maxExpand, a huge \rule is cut to maxSize), trust
 * stays off (no \href, \url, \includegraphics, \htmlData: KaTeX draws them
 * inert), and once the result's LaTeX time is spent the remaining formulas
 * are shown as their source instead of typeset. */

const KATEX_OPTIONS = {
	displayMode: false,    /* \displaystyle below: display-sized, yet breakable */
	throwOnError: false,   /* a parse error is drawn in red in its place */
	output: 'htmlAndMathml',
	trust: false,
	strict: 'ignore',
	maxExpand: LIMITS.latexMaxExpand,
	maxSize: LIMITS.latexMaxSize,
};

function latexItem(it, ctx) {
	const tex = str(it.latex);
	const d = el('div', 'item latex');
	if (tex.length > LIMITS.latexChars)
		throw new Error('its LaTeX is ' + tex.length + ' characters; the viewer typesets at most ' + LIMITS.latexChars);
	if (ctx.latexMillis <= 0) {
		d.classList.add('source');
		d.textContent = '$$ ' + tex + ' $$';
		d.title = 'not typeset: this result\'s formulas used up their time';
		return d;
	}
	const start = performance.now();
	try {
		/* Not in braces: a group is one unbreakable box, while a style
		 * command's body stays part of the formula's top level. */
		katex.render('\\displaystyle ' + tex, d, KATEX_OPTIONS);
	} finally {
		ctx.latexMillis -= performance.now() - start;
	}
	return d;
}

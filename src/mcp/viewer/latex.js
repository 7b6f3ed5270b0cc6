/* A "latex" item, typeset by KaTeX (global katex). Its budget: the source
 * is at most LIMITS.latexChars, KaTeX's maxExpand and maxSize are set (a
 * macro bomb stops at maxExpand, a huge \rule is cut to maxSize), trust
 * stays off (no \href, \url, \includegraphics, \htmlData: KaTeX draws them
 * inert), and once the result's LaTeX time is spent the remaining formulas
 * are shown as their source instead of typeset. */

const KATEX_OPTIONS = {
	displayMode: true,
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
		katex.render(tex, d, KATEX_OPTIONS);
	} finally {
		ctx.latexMillis -= performance.now() - start;
	}
	return d;
}

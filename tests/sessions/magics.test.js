// IPython and Sage REPL syntax through MCP: %time, %timeit,
// %display latex and !echo in run_sagemath, stateless and in a session,
// where %display latex lasts from one call to the next as in Sage's REPL;
// a magic that cannot run here fails in one line that says why.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { sdkClient, closeClient, call, ok, open, run, out, LONG } from './helpers.js';

// A result that displayed one formula: not in stdout, a
// "$$ … $$" line for the model, a latex item for viewers.
function latexOnly(res, latex) {
  assert.equal(res.r.isError, false, res.text);
  assert.equal(res.s.stdout, '');
  assert.deepEqual(res.s.display, [{ kind: 'latex', latex }]);
  assert.ok(res.text.startsWith(`$$ ${latex} $$\n`), res.text);
}

const TIMES = /^CPU times: user .+, sys: .+, total: .+\nWall time: [0-9.]+ (s|ms|µs|ns)\n/;
const TIMEIT = /± .+ per loop \(mean ± std\. dev\. of 2 runs, 3 loops each\)\n$/;

describe('REPL syntax in run_sagemath', () => {
  let c;
  before(async () => { c = await sdkClient(); });
  after(async () => { if (c) await closeClient(c); });

  test('stateless: %time, %timeit, %%time, !echo, %display latex, ?', { timeout: LONG }, async () => {
    const sage = async (code) => (await ok(c, 'run_sagemath', { code })).s.stdout;
    const t = await sage('%time factor(2^128+1)');
    assert.match(t, TIMES);
    assert.ok(t.endsWith('\n59649589127497217 * 5704689200685129054721\n'), t);
    assert.match(await sage('%timeit -n 3 -r 2 factor(2^64+1)'), TIMEIT);
    assert.match(await sage('%%time\ny = 2^10\ny + 1'), /\n1025\n$/);
    // the shell escape runs in the sandbox, with the call's output
    assert.equal(await sage('!echo hi\n!hostname'), 'hi\nsagebox\n');
    latexOnly(await call(c, 'run_sagemath', { code: '%display latex\nx^2/3' }), '\\frac{1}{3} \\, x^{2}');
    // a stateless call starts as Sage does: plain text again
    assert.equal(await sage('x^2/3'), '1/3*x^2\n');
    assert.match(await sage('is_prime?'), /^Signature: is_prime\(n\)\nDocstring:\n/);
    assert.match((await ok(c, 'run_python', { code: '%time 6*7' })).s.stdout, /\n42\n$/);
  });

  test('stateless: a magic that cannot run here fails in one line', { timeout: LONG }, async () => {
    const { r, s } = await call(c, 'run_sagemath', { code: '%pip install numpy' });
    assert.equal(r.isError, true);
    assert.equal(s.stderr, "UsageError: %pip: installing packages is not possible here: the sandbox has no network " +
      "(the user's `network` setting is none; with the package index in that list, pip install works)\n");
  });

  test('a session: %display latex lasts, %time and !echo run in its interpreter', { timeout: LONG }, async () => {
    const sid = await open(c, 'sage');
    assert.equal(await out(c, sid, 'sage', '%display latex'), '');
    latexOnly(await run(c, sid, 'sage', 'R.<x> = QQ[]\nx^2/3'), '\\frac{1}{3} x^{2}');
    latexOnly(await run(c, sid, 'sage', '1/2'), '\\frac{1}{2}');
    assert.match(await out(c, sid, 'sage', '%time f = factor(x^4 - 1)'), TIMES);
    assert.equal(await out(c, sid, 'sage', '%display plain\nf'), '(x - 1) * (x + 1) * (x^2 + 1)\n');
    assert.match(await out(c, sid, 'sage', '%timeit -n 3 -r 2 f.expand()'), TIMEIT);
    assert.equal(await out(c, sid, 'sage', 'n = 7\n!echo hi $n > note.txt\n!cat note.txt\n_exit_code'), 'hi 7\n0\n');
    const res = await run(c, sid, 'sage', '%run /etc/passwd');
    assert.equal(res.r.isError, true);
    assert.match(res.s.stderr, /^UsageError: \/etc\/passwd is outside the workspace \(\/work\)/);
    await ok(c, 'session_close', { session_id: sid });
  });
});

// The shell blocks of the README and the user guide that are marked to run
// (a fence whose info string has the word "tested", e.g. ```console tested)
// run as written, from the repository's root, with `sagebox` on PATH being
// the binary under test and a home of their own (no config.ini, no
// SAGEBOX_* variables of the machine's user). Each `$ COMMAND` line must
// exit 0; the lines under it are its expected stdout: equal, or a prefix
// when the line ends with "...", and a line "..." stands for any lines.
// The last expected line ending with "..." allows more lines after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { BIN } from '../lib/procs.mjs';
import { ROOT, USER_PAGES, blocks } from './pages.js';

// [{command, expected: [lines]}] of one block.
function steps(body) {
  const out = [];
  for (const line of body) {
    if (line.startsWith('$ ')) out.push({ command: line.slice(2), expected: [] });
    else if (out.length) out[out.length - 1].expected.push(line);
  }
  return out;
}

// Does the output match the expected lines?
export function matches(expected, output) {
  const exp = expected.length && expected[expected.length - 1] === '' ? expected.slice(0, -1) : expected;
  const go = (e, o) => {
    if (e === exp.length) return o === output.length;
    const want = exp[e];
    if (want === '...') {
      for (let k = o; k <= output.length; k++) if (go(e + 1, k)) return true;
      return false;
    }
    if (o >= output.length) return false;
    if (want.endsWith('...')) {
      if (!output[o].startsWith(want.slice(0, -3))) return false;
      return e === exp.length - 1 ? true : go(e + 1, o + 1);
    }
    return output[o] === want && go(e + 1, o + 1);
  };
  return go(0, 0);
}

test('the matcher of expected output', () => {
  assert.ok(matches(['a', 'b'], ['a', 'b']));
  assert.ok(!matches(['a', 'b'], ['a', 'c']));
  assert.ok(!matches(['a'], ['a', 'b']));
  assert.ok(matches(['a...'], ['abc', 'more', 'lines']));
  assert.ok(matches(['x', '...', 'z...', '...'], ['x', '1', '2', 'zz', '3']));
  assert.ok(!matches(['x', '...', 'z'], ['x', '1', 'y']));
});

function sandboxEnv(home, bindir) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SAGEBOX_')) env[k] = v;
  return {
    ...env,
    PATH: `${bindir}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
  };
}

const marked = USER_PAGES.flatMap(blocks).filter((b) => b.info.includes('tested'));

test('the user pages mark blocks to run', () => {
  for (const page of USER_PAGES) {
    assert.ok(marked.some((b) => b.page === page), `${page} has no block marked "tested"`);
  }
});

for (const b of marked) {
  test(`${b.page}:${b.line}: runs as written`, { timeout: 600000 }, () => {
    const tmp = mkdtempSync(path.join(tmpdir(), 'sagebox-docs-'));
    try {
      const home = path.join(tmp, 'home');
      const bindir = path.join(tmp, 'bin');
      mkdirSync(home, { mode: 0o755 });
      mkdirSync(bindir);
      symlinkSync(BIN, path.join(bindir, 'sagebox'));
      const all = steps(b.body);
      assert.ok(all.length > 0, `${b.page}:${b.line}: a "tested" block with no "$ " command`);
      for (const { command, expected } of all) {
        const r = spawnSync('bash', ['-c', command], {
          cwd: ROOT, env: sandboxEnv(home, bindir), encoding: 'utf8', timeout: 300000,
        });
        const where = `${b.page}:${b.line}: $ ${command}`;
        assert.equal(r.status, 0, `${where}: exit ${r.status} ${r.signal || ''}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
        const out = r.stdout.replace(/\n$/, '').split('\n');
        if (expected.length) {
          assert.ok(matches(expected, out),
            `${where}: the output is not what the page shows\npage:\n${expected.join('\n')}\ngot:\n${r.stdout}`);
        }
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
}

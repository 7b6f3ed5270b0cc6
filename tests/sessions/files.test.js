// Workspace files: every path escape is refused ('..', absolute paths
// outside /work, symlinks that lead out, a symlink swapped in while the
// file is opened), the workspace cap holds, `share` is read-only,
// file_export never overwrites and never follows a link, images come back
// as image content, binary data as base64.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

import {
  sdkClient, closeClient, call, ok, fails, refused, open, run, out, LONG,
} from './helpers.js';

// A directory the sandbox user (nobody, when the tests run as root) can
// read, outside /tmp.
function hostDir(tag) {
  const base = path.resolve(process.env.SAGEBOX_TEST_DIR || '/var/tmp');
  const d = mkdtempSync(path.join(base, `sagebox-${tag}-`));
  chmodSync(d, 0o755);
  return d;
}

describe('workspace paths', () => {
  let c;
  let sid;
  before(async () => {
    c = await sdkClient();
    sid = await open(c, 'python');
    // a secret outside the workspace, in the session's own /tmp
    await ok(c, 'run_python', {
      code: 'open("/tmp/secret", "w").write("TOPSECRET\\n")\nimport os\n'
        + 'os.symlink("/tmp/secret", "abs_out")\nos.symlink("../tmp/secret", "rel_out")\n'
        + 'os.symlink("/tmp", "dir_out")\nos.mkdir("sub")\nos.symlink("../inside.txt", "sub/up_in")\n'
        + 'open("inside.txt", "w").write("inside\\n")\nos.mkfifo("fifo")',
      session_id: sid,
    });
  });
  after(async () => {
    if (c) await closeClient(c);
  });

  test('relative and /work paths work; the shown path is under /work', async () => {
    const w = await ok(c, 'file_write', { session_id: sid, path: 'a/b/c.txt', content: 'héllo\n' });
    assert.deepEqual(w.s, { path: '/work/a/b/c.txt', bytes: 7 });
    const r = await ok(c, 'file_read', { session_id: sid, path: '/work/a/b/c.txt' });
    assert.equal(r.text, '[/work/a/b/c.txt: 7 bytes]\nhéllo\n');
    assert.equal(r.s.encoding, 'text');
    assert.equal(await out(c, sid, 'python', 'print(open("a/b/c.txt").read(), end="")'), 'héllo\n');
    const l = await ok(c, 'file_list', { session_id: sid, path: 'a/b' });
    assert.deepEqual(l.s.entries.map((e) => [e.name, e.type, e.size]), [['c.txt', 'file', 7]]);
    // The syscall policy refuses openat2 (its mode is out of a filter's
    // reach), so the file tools open one component at a time with
    // O_NOFOLLOW: even a symlink that stays inside is refused, by name;
    // the code's own Python reads through it.
    await fails(c, 'file_read', { session_id: sid, path: 'sub/up_in' }, /sub\/up_in is .*symbolic link that cannot be followed/);
    assert.equal(await out(c, sid, 'python', 'print(open("sub/up_in").read(), end="")'), 'inside\n');
  });

  test('a name that is not UTF-8 is listed escaped, names the file again, and leaves the session alive', async () => {
    // File_list of such a name broke the session's frames ("frame
    // header is not a JSON object") and the session was gone with its state.
    await ok(c, 'run_python', { session_id: sid, code: 'import os\nos.mkdir("odd")\nopen(b"/work/odd/\\xff\\xfe-latin1", "wb").write(b"latin\\n")\nkept = 41' });
    const l = await ok(c, 'file_list', { session_id: sid, path: 'odd' });
    assert.deepEqual(l.s.entries.map((e) => e.name), ['\\xff\\xfe-latin1']);
    const r = await ok(c, 'file_read', { session_id: sid, path: 'odd/\\xff\\xfe-latin1' });
    assert.equal(r.text, '[/work/odd/\\xff\\xfe-latin1: 6 bytes]\nlatin\n');
    await ok(c, 'file_write', { session_id: sid, path: 'odd/\\xff\\xfe-latin1', content: 'again\n' });
    assert.equal(await out(c, sid, 'python', 'print(os.listdir(b"odd"), open(b"odd/\\xff\\xfe-latin1").read().strip(), kept + 1)'),
      "[b'\\xff\\xfe-latin1'] again 42\n");
  });

  test('every escape is refused: .., absolute outside /work, symlinks out', async () => {
    const bad = [
      ['../tmp/secret', /contains '\.\.'/],
      ['/work/../tmp/secret', /contains '\.\.'/],
      ['a/../../tmp/secret', /contains '\.\.'/],
      ['/tmp/secret', /outside the workspace/],
      ['/etc/passwd', /outside the workspace/],
      ['/workx/y', /outside the workspace/],
      ['abs_out', /leads outside the workspace|symbolic link/],
      ['rel_out', /leads outside the workspace|symbolic link/],
      ['dir_out/secret', /leads outside the workspace|symbolic link/],
      ['/proc/self/root/tmp/secret', /outside the workspace/],
    ];
    for (const [p, re] of bad) {
      const r = await fails(c, 'file_read', { session_id: sid, path: p }, re);
      assert.doesNotMatch(r.text, /TOPSECRET/);
      await fails(c, 'file_write', { session_id: sid, path: p, content: 'pwned' }, re);
      await fails(c, 'file_export', { session_id: sid, path: p }, /.*/);
    }
    await fails(c, 'file_list', { session_id: sid, path: 'dir_out' }, /leads outside the workspace|symbolic link/);
    await fails(c, 'file_list', { session_id: sid, path: '/tmp' }, /outside the workspace/);
    await fails(c, 'file_read', { session_id: sid, path: 'fifo' }, /not a regular file/);
    await fails(c, 'file_write', { session_id: sid, path: 'fifo', content: 'x' }, /not a regular file/);
    // writing through a symlink is never done, even one that stays inside
    await fails(c, 'file_write', { session_id: sid, path: 'sub/up_in', content: 'x' }, /symbolic link|outside/);
    assert.equal(await out(c, sid, 'python', 'print(open("/tmp/secret").read(), open("inside.txt").read(), end="")'),
      'TOPSECRET\n inside\n');
  });

  test('a symlink swapped in while paths are opened is never followed', { timeout: LONG }, async () => {
    // the session's own code flips "flip" between a file and a symlink out
    await ok(c, 'run_python', {
      code: 'import os, threading\n'
        + 'def flipper():\n'
        + '    while True:\n'
        + '        try:\n'
        + '            os.symlink("/tmp/secret", "flip.l"); os.rename("flip.l", "flip")\n'
        + '            open("flip.f", "w").write("inside\\n"); os.rename("flip.f", "flip")\n'
        + '        except OSError: pass\n'
        + 'threading.Thread(target=flipper, daemon=True).start()',
      session_id: sid,
    });
    const seen = new Set();
    for (let i = 0; i < 300; i++) {
      const r = await call(c, i % 3 === 2 ? 'file_write' : 'file_read', { session_id: sid, path: 'flip', ...(i % 3 === 2 ? { content: 'inside\n' } : {}) });
      assert.doesNotMatch(r.text, /TOPSECRET/);
      seen.add(r.r.isError ? 'refused' : 'read');
    }
    assert.ok(seen.has('refused') && seen.has('read'), `the race ran both ways: ${[...seen]}`);
    assert.equal(await out(c, sid, 'python', 'print(open("/tmp/secret").read(), end="")'), 'TOPSECRET\n');
  });

  test('binary data as base64 both ways; long text in pages', { timeout: LONG }, async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await ok(c, 'file_write', { session_id: sid, path: 'bin.dat', content_base64: bytes.toString('base64') });
    const r = await ok(c, 'file_read', { session_id: sid, path: 'bin.dat' });
    assert.equal(r.s.encoding, 'base64');
    assert.equal(r.s.mime_type, 'application/octet-stream');
    assert.deepEqual(Buffer.from(r.s.content_base64, 'base64'), bytes);
    await fails(c, 'file_write', { session_id: sid, path: 'x', content_base64: 'not base64!' }, /not valid base64/);
    await refused(c, 'file_write', { session_id: sid, path: 'x' }, /exactly one of/);
    // append
    await ok(c, 'file_write', { session_id: sid, path: 'log.txt', content: 'a\n' });
    await ok(c, 'file_write', { session_id: sid, path: 'log.txt', content: 'b\n', append: true });
    assert.equal((await ok(c, 'file_read', { session_id: sid, path: 'log.txt' })).text, '[/work/log.txt: 4 bytes]\na\nb\n');
    // 600 KB of text: the first page, then the rest by offset
    await ok(c, 'run_python', { code: 'open("long.txt", "w").write("".join("line %06d\\n" % i for i in range(50000)))', session_id: sid });
    const p1 = await ok(c, 'file_read', { session_id: sid, path: 'long.txt' });
    assert.equal(p1.s.size, 600000);
    assert.ok(p1.s.next_offset < 600000);
    assert.match(p1.text, /call again with offset/);
    let got = p1.text.slice(p1.text.indexOf('\n') + 1);
    let off = p1.s.next_offset;
    while (off < 600000) {
      const p = await ok(c, 'file_read', { session_id: sid, path: 'long.txt', offset: off });
      got += p.text.slice(p.text.indexOf('\n') + 1);
      off = p.s.next_offset;
    }
    assert.equal(got.length, 600000);
    assert.ok(got.startsWith('line 000000\n') && got.endsWith('line 049999\n'));
  });

  test('a PNG comes back as image content with a line naming it; SVG too', { timeout: LONG }, async () => {
    await ok(c, 'run_python', {
      code: 'import matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\n'
        + 'plt.figure(figsize=(4, 3)); plt.plot([0, 1, 4, 9]); plt.savefig("plot.png", dpi=50)\n'
        + 'open("pic.svg", "w").write(\'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>\')',
      session_id: sid,
    });
    const r = await ok(c, 'file_read', { session_id: sid, path: 'plot.png' });
    const img = r.r.content.find((b) => b.type === 'image');
    assert.ok(img, JSON.stringify(r.r.content.map((b) => b.type)));
    assert.equal(img.mimeType, 'image/png');
    const png = Buffer.from(img.data, 'base64');
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [200, 150]);
    assert.match(r.text, /\/work\/plot\.png: image\/png image, \d+ bytes/);
    assert.equal(r.s.image, true);
    const s = await ok(c, 'file_read', { session_id: sid, path: 'pic.svg' });
    assert.equal(s.r.content.find((b) => b.type === 'image').mimeType, 'image/svg+xml');
  });
});

describe('workspace cap, share, export', () => {
  test('the workspace cap holds, and the result says it was hit', { timeout: LONG }, async () => {
    const c = await sdkClient({ args: ['--workspace-size', '2m'] });
    try {
      const sid = await open(c, 'python');
      await ok(c, 'file_write', { session_id: sid, path: 'one', content: 'x'.repeat(1500000) });
      const r = await fails(c, 'file_write', { session_id: sid, path: 'two', content: 'y'.repeat(1500000) },
        /the workspace is full.*the incomplete file was removed.*workspace_size/s);
      assert.equal(r.s.error.includes('fit'), true);
      const l = await ok(c, 'file_list', { session_id: sid });
      assert.deepEqual(l.s.entries.map((e) => e.name), ['one']);
      const code = await run(c, sid, 'python', 'open("big", "wb").write(b"0" * 3_000_000)');
      assert.match(code.s.stderr, /No space left on device/);
      assert.equal(await out(c, sid, 'python', 'import shutil; print(shutil.disk_usage("/work").total <= 2 << 20)'), 'True\n');
    } finally {
      await closeClient(c);
    }
  });

  test('share: host directories are readable at /data/NAME and never writable, in sessions and stateless calls', { timeout: LONG }, async () => {
    const d = hostDir('share');
    const papers = path.join(d, 'papers');
    mkdirSync(papers, { mode: 0o755 });
    writeFileSync(path.join(papers, 'note.txt'), 'shared note\n', { mode: 0o644 });
    const c = await sdkClient({ args: ['--share', papers] });
    try {
      const sid = await open(c, 'shell');
      assert.equal(await out(c, sid, 'shell', 'cat /data/papers/note.txt'), 'shared note\n');
      const w = await run(c, sid, 'shell',
        'echo x > /data/papers/new 2>&1; echo "rc=$?"; rm -f /data/papers/note.txt; echo "rm=$?"; touch /data/x; echo "top=$?"');
      assert.match(w.s.stdout, /rc=1\nrm=1\ntop=1/);
      const stateless = await ok(c, 'run_python', { code: 'print(open("/data/papers/note.txt").read(), end="")' });
      assert.equal(stateless.s.stdout, 'shared note\n');
      await fails(c, 'file_read', { session_id: sid, path: '/data/papers/note.txt' }, /outside the workspace/);
      assert.deepEqual(readdirSync(papers), ['note.txt']);
      assert.equal(readFileSync(path.join(papers, 'note.txt'), 'utf8'), 'shared note\n');
    } finally {
      await closeClient(c);
      rmSync(d, { recursive: true, force: true });
    }
  });

  test('file_export refuses a sparse file larger than the workspace, and leaves nothing', { timeout: LONG }, async () => {
    // With workspace_size 16m a 100 MiB sparse file was exported
    // cut to 16 MiB, and the tool said it copied 104857600 bytes.
    const d = hostDir('export-sparse');
    const c = await sdkClient({ args: ['--export-dir', d, '--workspace-size', '16m'] });
    try {
      const sid = await open(c, 'python');
      await ok(c, 'run_python', { code: 'f = open("sparse", "wb"); f.truncate(100 << 20); f.close()', session_id: sid });
      await fails(c, 'file_export', { session_id: sid, path: 'sparse' },
        /\/work\/sparse is 104857600 bytes, more than file_export copies \(at most 16777216 bytes, the workspace size\): nothing was exported/);
      assert.deepEqual(readdirSync(d), []);
      await ok(c, 'file_write', { session_id: sid, path: 'small.txt', content: 'small\n' });
      const e = await ok(c, 'file_export', { session_id: sid, path: 'small.txt' });
      assert.equal(e.s.bytes, 6);
      assert.match(e.text, /\(6 bytes\)/);
    } finally {
      await closeClient(c);
      rmSync(d, { recursive: true, force: true });
    }
  });

  test('file_export copies under a fresh name: never overwrites, never follows a link', { timeout: LONG }, async () => {
    const d = hostDir('export');
    const target = path.join(hostDir('target'), 'victim');
    writeFileSync(path.join(d, 'result.txt'), 'old\n');
    symlinkSync(target, path.join(d, 'plot.png'));
    const c = await sdkClient({ args: ['--export-dir', d] });
    try {
      const sid = await open(c, 'python');
      await ok(c, 'file_write', { session_id: sid, path: 'result.txt', content: 'new\n' });
      await ok(c, 'file_write', { session_id: sid, path: 'plot.png', content: 'png?\n' });
      await ok(c, 'file_write', { session_id: sid, path: 'odd name;$(x).txt', content: 'odd\n' });
      const e1 = await ok(c, 'file_export', { session_id: sid, path: 'result.txt' });
      assert.equal(e1.s.host_path, path.join(d, 'result-1.txt'));
      const e2 = await ok(c, 'file_export', { session_id: sid, path: '/work/plot.png' });
      assert.equal(e2.s.host_path, path.join(d, 'plot-1.png'));
      const e3 = await ok(c, 'file_export', { session_id: sid, path: 'result.txt' });
      assert.equal(e3.s.host_path, path.join(d, 'result-2.txt'));
      const e4 = await ok(c, 'file_export', { session_id: sid, path: 'odd name;$(x).txt' });
      assert.equal(path.dirname(e4.s.host_path), d);
      assert.match(path.basename(e4.s.host_path), /^[A-Za-z0-9._-]+$/);
      assert.equal(readFileSync(path.join(d, 'result.txt'), 'utf8'), 'old\n');
      assert.equal(readFileSync(path.join(d, 'result-1.txt'), 'utf8'), 'new\n');
      assert.ok(lstatSync(path.join(d, 'plot.png')).isSymbolicLink());
      assert.equal(readlinkSync(path.join(d, 'plot.png')), target);
      assert.equal(existsSync(target), false, 'the link was not followed');
      // a workspace symlink that leads out is refused; so is a missing file
      await ok(c, 'run_python', { code: 'import os; os.symlink("/etc/passwd", "pw")', session_id: sid });
      await fails(c, 'file_export', { session_id: sid, path: 'pw' }, /outside the workspace|symbolic link/);
      await fails(c, 'file_export', { session_id: sid, path: 'nope' }, /does not exist/);
      assert.deepEqual(readdirSync(d).sort(), ['odd_name___x_.txt', 'plot-1.png', 'plot.png', 'result-1.txt', 'result-2.txt', 'result.txt'].sort());
    } finally {
      await closeClient(c);
      rmSync(d, { recursive: true, force: true });
      rmSync(path.dirname(target), { recursive: true, force: true });
    }
    const off = await sdkClient();
    try {
      const sid = await open(off, 'shell');
      await fails(off, 'file_export', { session_id: sid, path: 'x' }, /file_export is turned off/);
    } finally {
      await closeClient(off);
    }
  });
});

// Raw protocol tests: lines written straight to the binary's stdin, every
// answer read from its stdout. Covers version negotiation, the lifecycle and
// every error the issue lists.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import {
  RawServer, REVISIONS, LATEST, markedSleep, uniqueMarker, waitGone, waitPresent, vmHWMkB, sleep, TOOL_NAMES,
} from './helpers.js';

async function withServer(fn, opts) {
  const s = new RawServer(opts);
  try {
    return await fn(s);
  } finally {
    const st = await s.close();
    assert.equal(st.code, 0, `server exit: ${JSON.stringify(st)}\n${s.stderr}`);
  }
}

function assertError(res, code, id) {
  assert.ok(res.error, `expected an error, got ${JSON.stringify(res)}`);
  assert.equal(res.error.code, code, JSON.stringify(res.error));
  assert.equal(typeof res.error.message, 'string');
  assert.ok(res.error.message.length > 0);
  assert.equal(res.id, id);
  assert.ok(!('result' in res));
}

describe('initialize and version negotiation', () => {
  for (const v of REVISIONS) {
    test(`revision ${v} is echoed`, () => withServer(async (s) => {
      const r = await s.initialize(v);
      assert.equal(r.protocolVersion, v);
      assert.equal(r.serverInfo.name, 'sagebox');
      assert.match(r.serverInfo.version, /^\d+\.\d+\.\d+/);
      assert.equal(typeof r.serverInfo.title, 'string');
      assert.ok(r.capabilities.tools);
      assert.ok(r.capabilities.logging);
      // resources: session files and the MCP Apps viewer; no prompts.
      assert.ok(r.capabilities.resources && !r.capabilities.prompts);
      assert.match(r.instructions, /R\.<x> = QQ\[\]/);
      assert.match(r.instructions, /print/);
      assert.match(r.instructions, /sandbox_status/);
      assert.match(r.instructions, /[Nn]o network/);
      assert.match(r.instructions, /user's files/);
    }));
  }

  test('an unknown revision is answered with the newest', () => withServer(async (s) => {
    const r = await s.initialize('2023-01-01');
    assert.equal(r.protocolVersion, LATEST);
  }));

  test('initialize without protocolVersion is -32602', () => withServer(async (s) => {
    const r = await s.request(1, 'initialize', { capabilities: {}, clientInfo: { name: 'x', version: '1' } });
    assertError(r, -32602, 1);
    // The session is still usable.
    const ok = await s.initialize('2025-06-18', 2);
    assert.equal(ok.protocolVersion, '2025-06-18');
  }));

  test('a second initialize is an error and the session goes on', () => withServer(async (s) => {
    await s.initialize('2025-06-18');
    const r = await s.request(2, 'initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } });
    assertError(r, -32600, 2);
    const list = await s.request(3, 'tools/list');
    assert.ok(list.result.tools.length === TOOL_NAMES.length);
    // Still the first negotiated revision: outputSchema is there.
    assert.ok(list.result.tools[0].outputSchema);
  }));

  test('requests before initialize get an error; ping is allowed; serving goes on', () => withServer(async (s) => {
    assertError(await s.request(1, 'tools/list'), -32600, 1);
    assertError(await s.request(2, 'tools/call', { name: 'run_shell', arguments: { code: 'echo hi' } }), -32600, 2);
    assertError(await s.request(3, 'logging/setLevel', { level: 'debug' }), -32600, 3);
    assert.deepEqual((await s.request(4, 'ping')).result, {});
    // A notification before initialize gets nothing back.
    s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await s.initialize('2025-06-18');
    assert.equal((await s.request(5, 'tools/list')).result.tools.length, TOOL_NAMES.length);
  }));

  test('ping answers {} with the same id (string and integer ids)', () => withServer(async (s) => {
    await s.initialize();
    assert.deepEqual(await s.request('abc', 'ping'), { jsonrpc: '2.0', id: 'abc', result: {} });
    assert.deepEqual(await s.request(0, 'ping'), { jsonrpc: '2.0', id: 0, result: {} });
    assert.deepEqual(await s.request(-7, 'ping', {}), { jsonrpc: '2.0', id: -7, result: {} });
  }));
});

describe('tools/list per revision', () => {
  const expect = {
    '2024-11-05': { title: false, annotations: false, outputSchema: false },
    '2025-03-26': { title: false, annotations: true, outputSchema: false },
    '2025-06-18': { title: true, annotations: true, outputSchema: true },
    '2025-11-25': { title: true, annotations: true, outputSchema: true },
  };
  for (const v of REVISIONS) {
    test(`fields of ${v}`, () => withServer(async (s) => {
      await s.initialize(v);
      const { tools } = (await s.request(1, 'tools/list')).result;
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
      for (const t of tools) {
        assert.equal('title' in t, expect[v].title, `${t.name} title`);
        assert.equal('annotations' in t, expect[v].annotations, `${t.name} annotations`);
        assert.equal('outputSchema' in t, expect[v].outputSchema, `${t.name} outputSchema`);
        assert.equal(t.inputSchema.type, 'object');
        assert.equal(t.inputSchema.additionalProperties, false);
      }
      const call = await s.request(2, 'tools/call', { name: 'run_shell', arguments: { code: 'echo hi' } }, 60000);
      assert.equal('structuredContent' in call.result, expect[v].outputSchema);
      assert.match(call.result.content[0].text, /^hi\n/);
    }));
  }

  test('a cursor that was never handed out is -32602', () => withServer(async (s) => {
    await s.initialize();
    assertError(await s.request(1, 'tools/list', { cursor: 'x' }), -32602, 1);
  }));
});

describe('malformed messages', () => {
  test('not JSON -> -32700 with id null', () => withServer(async (s) => {
    s.send('this is not json');
    assertError(await s.response(null), -32700, null);
    s.send('{"jsonrpc":"2.0","id":1,"method":"ping"'); // truncated
    await sleep(200);
    assert.equal(s.responses().filter((r) => r.error?.code === -32700).length, 2);
    assert.deepEqual((await s.request(2, 'ping')).result, {});
  }));

  test('a batch (JSON array) -> -32600, and nothing in it is run', () => withServer(async (s) => {
    await s.initialize();
    s.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
    const r = await s.response(null);
    assertError(r, -32600, null);
    assert.match(r.error.message, /batch/i);
    s.send('[]');
    await s.waitFor(() => s.responses().filter((x) => x.id === null).length === 2);
    await sleep(200);
    assert.equal(s.responses().filter((x) => x.id === 1 || x.id === 2).length, 0);
  }));

  test('invalid requests -> -32600', () => withServer(async (s) => {
    await s.initialize();
    const cases = [
      [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 1],
      [{ id: 2, method: 'ping' }, 2],
      [{ jsonrpc: '2.0', id: 3 }, 3],
      [{ jsonrpc: '2.0', id: 4, method: 5 }, 4],
      [{ jsonrpc: '2.0', id: 5, method: 'ping', params: 'x' }, 5],
      [{ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: true, method: 'ping' }, null],
      ['"just a string"', null],
      ['42', null],
    ];
    for (const [msg, id] of cases) {
      const before = s.responses().length;
      s.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
      await s.waitFor(() => s.responses().length > before, 5000, `an answer to ${JSON.stringify(msg)}`);
      const r = s.responses()[before];
      assertError(r, -32600, id);
    }
  }));

  test('null id -> -32600 with id null', () => withServer(async (s) => {
    await s.initialize();
    s.send({ jsonrpc: '2.0', id: null, method: 'ping' });
    const r = await s.response(null);
    assertError(r, -32600, null);
    assert.match(r.error.message, /null/);
  }));

  test('duplicate keys are refused', () => withServer(async (s) => {
    await s.initialize();
    s.send('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sandbox_status","name":"run_shell"}}');
    // (answered with its id, found by the scanner)
    const r = await s.response(9);
    assert.equal(r.error.code, -32700);
  }));

  test('invalid UTF-8 -> -32700, with the request id when it can be found', () => withServer(async (s) => {
    await s.initialize();
    const cases = [
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"run_shell","arguments":{"code":"echo '), Buffer.from([0xc3, 0x28]), Buffer.from('"}}}')]),
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":22,"method":"ping","params":{"x":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}}')]), // overlong '/'
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"ping","params":{"x":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"},"id":"s23"}')]), // surrogate
    ];
    const ids = [null, 21, 22, 's23'];
    for (let i = 0; i < cases.length; i++) {
      const before = s.responses().length;
      s.send(cases[i]);
      await s.waitFor(() => s.responses().length > before, 5000);
      const r = s.responses()[before];
      assertError(r, -32700, ids[i]);
      assert.match(r.error.message, /UTF-8/);
    }
    // Valid multi-byte UTF-8 is fine.
    const ok = await s.request(24, 'tools/call', { name: 'run_shell', arguments: { code: "printf '%s\\n' 'π ≈ 3.14 😀'" } }, 60000);
    assert.match(ok.result.content[0].text, /π ≈ 3\.14 😀/);
  }));

  test('a 64 MiB line gets an error; memory stays bounded; serving goes on', { timeout: 120000 }, () => withServer(async (s) => {
    await s.initialize();
    const head = '{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"';
    const chunk = Buffer.alloc(1 << 20, 'a');
    s.proc.stdin.write(head);
    for (let i = 0; i < 64; i++) {
      if (!s.proc.stdin.write(chunk)) await new Promise((r) => s.proc.stdin.once('drain', r));
    }
    s.proc.stdin.write('"}}}\n');
    const r = await s.response(77, 60000);
    assertError(r, -32600, 77);
    assert.match(r.error.message, /limit/);
    // Same with the id after the payload (the TypeScript SDK puts it last).
    s.proc.stdin.write('{"method":"tools/call","params":{"name":"run_python","arguments":{"code":"');
    for (let i = 0; i < 16; i++) {
      if (!s.proc.stdin.write(chunk)) await new Promise((r2) => s.proc.stdin.once('drain', r2));
    }
    s.proc.stdin.write('"}},"jsonrpc":"2.0","id":"tail-id"}\n');
    assertError(await s.response('tail-id', 60000), -32600, 'tail-id');
    assert.deepEqual((await s.request(78, 'ping')).result, {});
    const hwm = vmHWMkB(s.pid);
    assert.ok(hwm < 64 * 1024, `peak RSS ${hwm} kB: the line was buffered`);
  }));
});

describe('methods and params', () => {
  test('unknown method -> -32601; unknown notification -> nothing', () => withServer(async (s) => {
    await s.initialize();
    assertError(await s.request(1, 'prompts/list'), -32601, 1);
    assertError(await s.request(2, 'no/such/method', {}), -32601, 2);
    // A long multi-byte method name is quoted cut at a character boundary.
    const long = await s.request(22, 'é'.repeat(80), {});
    assertError(long, -32601, 22);
    assert.match(long.error.message, /^Method not found: é+$/);
    s.send({ jsonrpc: '2.0', method: 'notifications/whatever', params: {} });
    s.send({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'run_shell', arguments: { code: 'echo x' } } });
    // A response sent by the client (the server sends no requests) is ignored.
    s.send({ jsonrpc: '2.0', id: 99, result: {} });
    const pong = await s.request(3, 'ping');
    assert.deepEqual(pong.result, {});
    await sleep(300);
    assert.deepEqual(s.responses().map((r) => r.id), ['init', 1, 2, 22, 3]);
  }));

  const bad = [
    ['unknown tool', { name: 'rm_rf', arguments: {} }, /Unknown tool/],
    ['missing name', { arguments: {} }, /name/],
    ['missing code', { name: 'run_python', arguments: {} }, /code/],
    ['no arguments at all', { name: 'run_sagemath' }, /code/],
    ['code not a string', { name: 'run_python', arguments: { code: 5 } }, /code/],
    ['arguments not an object', { name: 'run_python', arguments: ['print(1)'] }, /object/],
    ['timeout 0', { name: 'run_python', arguments: { code: 'print(1)', timeout_seconds: 0 } }, /timeout_seconds/],
    ['timeout 601', { name: 'run_python', arguments: { code: 'print(1)', timeout_seconds: 601 } }, /timeout_seconds/],
    ['timeout 2.5', { name: 'run_python', arguments: { code: 'print(1)', timeout_seconds: 2.5 } }, /timeout_seconds/],
    ['timeout "10"', { name: 'run_python', arguments: { code: 'print(1)', timeout_seconds: '10' } }, /timeout_seconds/],
    ['timeout true', { name: 'run_python', arguments: { code: 'print(1)', timeout_seconds: true } }, /timeout_seconds/],
    ['extra property', { name: 'run_python', arguments: { code: 'print(1)', language: 'python' } }, /language/],
    ['argument to a tool without any', { name: 'sandbox_status', arguments: { verbose: true } }, /verbose/],
    ['code of 50,001 characters', { name: 'run_python', arguments: { code: '#'.repeat(50001) } }, /50001.*50000/],
    ['50,001 astral characters', { name: 'run_python', arguments: { code: '😀'.repeat(50001) } }, /50001/],
  ];
  test('schema violations -> -32602 with the reason', () => withServer(async (s) => {
    await s.initialize();
    let id = 100;
    for (const [what, params, re] of bad) {
      const r = await s.request(++id, 'tools/call', params);
      assertError(r, -32602, id);
      assert.match(r.error.message, re, what);
    }
  }));

  test('bounds that must pass: 50,000 code points (astral), timeout 1, 600 and 5.0', { timeout: 120000 }, () => withServer(async (s) => {
    await s.initialize();
    // 50,000 code points are 100,000 UTF-16 units and 200,000 bytes.
    const astral = `echo ok\n# ${'😀'.repeat(49990)}`;
    assert.equal([...astral].length, 50000);
    let r = await s.request(1, 'tools/call', { name: 'run_shell', arguments: { code: astral } }, 60000);
    assert.ok(r.result, JSON.stringify(r.error));
    r = await s.request(2, 'tools/call', { name: 'run_shell', arguments: { code: `#${'x'.repeat(49999)}` } }, 60000);
    assert.ok(r.result, JSON.stringify(r.error));
    for (const t of [1, 600]) {
      r = await s.request(`t${t}`, 'tools/call', { name: 'run_shell', arguments: { code: 'echo ok', timeout_seconds: t } }, 60000);
      assert.ok(r.result && !r.result.isError, JSON.stringify(r));
      assert.equal(r.result.structuredContent.timeout_seconds, t);
    }
    s.send('{"jsonrpc":"2.0","id":"real","method":"tools/call","params":{"name":"run_shell","arguments":{"code":"echo ok","timeout_seconds":5.0}}}');
    r = await s.response('real', 60000);
    assert.equal(r.result.structuredContent.timeout_seconds, 5);
  }));

  test('logging/setLevel: valid levels accepted, others -32602', () => withServer(async (s) => {
    await s.initialize();
    for (const level of ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']) {
      assert.deepEqual((await s.request(`l-${level}`, 'logging/setLevel', { level })).result, {});
    }
    assertError(await s.request('bad', 'logging/setLevel', { level: 'verbose' }), -32602, 'bad');
    assertError(await s.request('none', 'logging/setLevel', {}), -32602, 'none');
  }));

  test('notifications/message honours the level', () => withServer(async (s) => {
    await s.initialize();
    await s.request(1, 'logging/setLevel', { level: 'debug' });
    await s.request(2, 'tools/call', { name: 'run_shell', arguments: { code: 'echo a' } }, 60000);
    await sleep(200);
    const debug = s.notifications('notifications/message');
    assert.ok(debug.some((n) => n.params.level === 'debug'), JSON.stringify(debug));
    assert.ok(debug.every((n) => n.params.logger === 'sagebox' && typeof n.params.data === 'string'));
    await s.request(3, 'logging/setLevel', { level: 'error' });
    const count = s.notifications('notifications/message').length;
    await s.request(4, 'tools/call', { name: 'run_shell', arguments: { code: 'echo b' } }, 60000);
    await s.request(5, 'tools/call', { name: 'run_shell', arguments: { code: 'exit 1' } }, 60000);
    await sleep(200);
    assert.equal(s.notifications('notifications/message').length, count);
  }));

  test('a request id in flight cannot be reused', () => withServer(async (s) => {
    await s.initialize();
    const marker = uniqueMarker('dup');
    s.send({ jsonrpc: '2.0', id: 'same', method: 'tools/call', params: { name: 'run_shell', arguments: { code: markedSleep(marker, 30) } } });
    assert.ok(await waitPresent(marker));
    s.send({ jsonrpc: '2.0', id: 'same', method: 'tools/call', params: { name: 'run_shell', arguments: { code: 'echo x' } } });
    const r = await s.response('same');
    assertError(r, -32600, 'same');
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'same' } });
    assert.deepEqual(await waitGone(marker), []);
  }));
});

// Strings were compared as C strings, so "ping\u0000x"
// answered as ping and the tool "run_python\u0000x" ran run_python.
describe('embedded NUL characters (\\u0000)', () => {
  test('a method with a NUL is not that method', () => withServer(async (s) => {
    await s.initialize();
    const r = await s.request(1, 'ping\u0000x');
    assertError(r, -32600, 1);
    assert.match(r.error.message, /"method" contains a NUL character/);
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled\u0000x', params: { requestId: 1 } });
    assertError(await s.response(null), -32600, null);
    const v = await s.request(2, 'ping', undefined);
    assert.deepEqual(v.result, {});
    s.send('{"jsonrpc":"2.0\\u0000","id":3,"method":"ping"}');
    assertError(await s.response(3), -32600, 3);
  }));

  test('a tool name with a NUL runs nothing', () => withServer(async (s) => {
    await s.initialize();
    const marker = uniqueMarker('nul');
    const r = await s.request(1, 'tools/call', { name: 'run_shell\u0000x', arguments: { code: markedSleep(marker, 30) } });
    assertError(r, -32602, 1);
    assert.match(r.error.message, /tool name contains a NUL character.*the tools are run_sagemath, run_python, run_shell, sandbox_status, sandbox_self_test/);
    assert.equal(await waitPresent(marker, 1500), false, 'the job ran');
  }));

  test('NUL in other strings read as text: -32602 naming the field', () => withServer(async (s) => {
    const init = await s.request(0, 'initialize', { protocolVersion: '2025-06-18\u0000', capabilities: {}, clientInfo: { name: 'x', version: '1' } });
    assertError(init, -32602, 0);
    assert.match(init.error.message, /"protocolVersion" contains a NUL/);
    const info = await s.request('i', 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x\u0000y', version: '1' } });
    assertError(info, -32602, 'i');
    assert.match(info.error.message, /"clientInfo.name" contains a NUL/);
    await s.initialize('2025-06-18');
    const cases = [
      ['logging/setLevel', { level: 'debug\u0000' }, /"level" contains a NUL/],
      ['tools/list', { cursor: 'a\u0000' }, /"cursor" contains a NUL/],
      ['tools/call', { name: 'run_python', arguments: { code: 'print(1)' }, _meta: { progressToken: 't\u0000' } }, /"_meta.progressToken" contains a NUL/],
    ];
    let id = 10;
    for (const [method, params, re] of cases) {
      const r = await s.request(++id, method, params);
      assertError(r, -32602, id);
      assert.match(r.error.message, re);
    }
    // An argument name with a NUL does not even parse.
    s.send('{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"run_python","arguments":{"code\\u0000x":"print(1)"}}}');
    const r = await s.response(20);
    assert.equal(r.error.code, -32700);
    assert.match(r.error.message, /NUL/);
    // Code itself may hold NUL characters: it reaches the interpreter whole
    // (cut at the NUL it would be an unterminated string), and Python says
    // what it thinks of them.
    const code = await s.request(21, 'tools/call', { name: 'run_python', arguments: { code: 'print(len("a\u0000b"))' } }, 60000);
    assert.match(code.result.structuredContent.stderr, /null bytes/, JSON.stringify(code));
  }));
});

describe('cancellation, concurrency and shutdown (raw)', () => {
  test('notifications/cancelled kills the job and no response is sent', () => withServer(async (s) => {
    await s.initialize();
    const marker = uniqueMarker('rawcancel');
    s.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'run_shell', arguments: { code: markedSleep(marker) } } });
    assert.ok(await waitPresent(marker), 'the job never started');
    const t0 = Date.now();
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'user pressed stop' } });
    assert.deepEqual(await waitGone(marker), []);
    assert.ok(Date.now() - t0 < 5000);
    assert.deepEqual((await s.request('after', 'ping')).result, {});
    await sleep(1000);
    assert.equal(s.responses().filter((r) => r.id === 'long').length, 0, 'a cancelled request was answered');
    // Cancelling an unknown or finished request is harmless.
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nope' } });
    assert.deepEqual((await s.request('after2', 'ping')).result, {});
  }));

  test('ping is answered at once while a long job runs', () => withServer(async (s) => {
    await s.initialize();
    const marker = uniqueMarker('ping');
    s.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'run_shell', arguments: { code: markedSleep(marker, 60) } } });
    assert.ok(await waitPresent(marker));
    const t0 = Date.now();
    await s.request('p', 'ping');
    assert.ok(Date.now() - t0 < 500, `ping took ${Date.now() - t0} ms`);
    const list = await s.request('l', 'tools/list');
    assert.equal(list.result.tools.length, TOOL_NAMES.length);
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long' } });
    assert.deepEqual(await waitGone(marker), []);
  }));

  test('closing stdin kills running jobs and the server exits 0', async () => {
    const s = new RawServer();
    await s.initialize();
    const marker = uniqueMarker('eof');
    s.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_shell', arguments: { code: markedSleep(marker) } } });
    s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_python', arguments: { code: `import subprocess\nsubprocess.run(['sh', '-c', 'sleep 300; true', '${marker}'])` } } });
    assert.ok(await waitPresent(marker));
    await sleep(500);
    const t0 = Date.now();
    const st = await s.close(20000);
    assert.equal(st.code, 0, s.stderr);
    assert.ok(Date.now() - t0 < 10000, `exit took ${Date.now() - t0} ms`);
    assert.deepEqual(await waitGone(marker, 3000), []);
  });

  test('SIGTERM kills running jobs and the server exits 0', async () => {
    const s = new RawServer();
    await s.initialize();
    const marker = uniqueMarker('term');
    s.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_shell', arguments: { code: markedSleep(marker) } } });
    assert.ok(await waitPresent(marker));
    s.proc.kill('SIGTERM');
    const st = await s.exited;
    assert.equal(st.code, 0, s.stderr);
    assert.deepEqual(await waitGone(marker, 3000), []);
  });

  test('calls beyond max_concurrent wait their turn; a queued call can be cancelled', { timeout: 60000 }, () => withServer(async (s) => {
    await s.initialize();
    const t0 = Date.now();
    s.send({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'run_shell', arguments: { code: 'sleep 2; echo a' } } });
    s.send({ jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'run_shell', arguments: { code: 'sleep 2; echo b' } } });
    s.send({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'run_shell', arguments: { code: 'echo c' } } });
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } });
    // The status never waits behind jobs.
    const st = await s.request('st', 'tools/call', { name: 'sandbox_status', arguments: {} });
    assert.ok(Date.now() - t0 < 1500, 'sandbox_status waited behind a job');
    assert.equal(st.result.structuredContent.settings.max_concurrent, 1);
    await s.response('a', 30000);
    await s.response('b', 30000);
    assert.ok(Date.now() - t0 >= 4000, `two 2 s jobs with max_concurrent 1 took ${Date.now() - t0} ms`);
    await sleep(300);
    assert.equal(s.responses().filter((r) => r.id === 'c').length, 0);
  }, { args: ['--max-concurrent', '1'] }));
});

describe('sandbox failures are tool results, not protocol errors', () => {
  test('a backend that cannot start -> isError, the reason, and what to do', () => withServer(async (s) => {
    await s.initialize();
    const r = await s.request(1, 'tools/call', { name: 'run_sagemath', arguments: { code: 'print(1)' } }, 60000);
    assert.ok(r.result, JSON.stringify(r));
    assert.equal(r.result.isError, true);
    assert.equal(typeof r.result.structuredContent.error, 'string');
    assert.equal(r.result.structuredContent.ok, false);
    const text = r.result.content[0].text;
    assert.match(text, /^\[sandbox error: /);
    assert.match(text, /not a problem with your code/);
    assert.match(text, /sandbox_status/);
    // The status tool still answers, and says what is wrong.
    const st = await s.request(2, 'tools/call', { name: 'sandbox_status', arguments: {} }, 60000);
    assert.equal(st.result.isError, false);
    assert.equal(st.result.structuredContent.ok, false);
    assert.match(st.result.content[0].text,
      /^sagebox: the sandbox does NOT work here \(docker backend\)\.\n  why +docker executable '\/nonexistent\/sagebox-test-docker' not found\n  fix +/);
  }, { args: ['--backend', 'docker', '--podman', '/nonexistent/sagebox-test-docker'] }));
});

describe('command line', () => {
  test('a bad setting flag exits 2 with the reason on stderr, nothing on stdout', async () => {
    const s = new RawServer({ args: ['--timeout', '0'] });
    const st = await s.exited;
    assert.equal(st.code, 2);
    assert.match(s.stderr, /timeout/);
    assert.equal(s.messages.length + s.badLines.length, 0);
  });

  test('an unknown flag exits 2', async () => {
    const s = new RawServer({ args: ['--frobnicate'] });
    const st = await s.exited;
    assert.equal(st.code, 2);
    assert.match(s.stderr, /frobnicate/);
  });
});

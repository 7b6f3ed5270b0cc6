// The MCP Apps extension (io.modelcontextprotocol/ui) and
// resources, with the official SDK clients: the viewer and the tools'
// _meta.ui only for a client that declares the extension, in both protocol
// eras (initialize's capabilities; 2026-07-28's per-request client
// capabilities); a session's file as sagebox://session/ID/PATH, readable by
// the session's owner only.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startServer, tokenFile, textOf, sdkEras } from './helpers.js';

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const VIEWER = 'ui://sagebox/viewer';
const WITH_UI = { extensions: { [UI]: { mimeTypes: [MIME] } } };
const LINKED = ['interact_update', 'job_output', 'run_python', 'run_sagemath'];
const ALICE = 'token-alice-apps-1234567890';
const BOB = 'token-bob-apps-1234567890';

const eras = sdkEras('apps');

for (const era of eras) {
  describe(era.name, { timeout: 300000 }, () => {
    let s, plain, apps, bob;
    before(async () => {
      s = await startServer({ args: ['--token-file', tokenFile({ alice: ALICE, bob: BOB })] });
      plain = await era.connect(s.url, ALICE, {});
      apps = await era.connect(s.url, ALICE, WITH_UI);
      bob = await era.connect(s.url, BOB, WITH_UI);
    });
    after(async () => {
      for (const c of [plain, apps, bob]) await c?.close();
      await s?.stop();
    });

    test('a client without the extension gets no _meta.ui and no viewer', async () => {
      const { tools } = await plain.listTools();
      assert.ok(tools.length > 0);
      for (const t of tools) assert.equal(t._meta, undefined, `${t.name} has _meta`);
      assert.deepEqual((await plain.listResources()).resources, []);
      await assert.rejects(plain.readResource({ uri: VIEWER }), /-32002|Resource not found/);
      assert.equal(plain.getServerCapabilities().extensions?.[UI], undefined);
    });

    test('a client with the extension: _meta.ui on the run tools, the viewer resource', async () => {
      const { tools } = await apps.listTools();
      const linked = tools.filter((t) => t._meta?.ui?.resourceUri === VIEWER).map((t) => t.name).sort();
      assert.deepEqual(linked, LINKED);
      // Otherwise the same list as a client without the extension sees,
      // but for the viewer's own tool.
      const bare = tools.map(({ _meta, ...t }) => t).filter((t) => t.name !== 'interact_update');
      assert.deepEqual(bare, (await plain.listTools()).tools);
      const { resources } = await apps.listResources();
      assert.deepEqual(resources.map((r) => [r.uri, r.mimeType]), [[VIEWER, MIME]]);
      const { contents } = await apps.readResource({ uri: VIEWER });
      assert.equal(contents.length, 1);
      assert.equal(contents[0].mimeType, MIME);
      assert.match(contents[0].text, /^<!DOCTYPE html>/);
      assert.match(contents[0].text, /katex/);
      // Self-contained: nothing is loaded from elsewhere (outside its inline
      // scripts, whose text may name anything: no script or stylesheet by
      // address, no @import or url() in its styles but data:).
      const markup = contents[0].text.replace(/<script>[\s\S]*?<\/script>/g, '<script></script>');
      assert.doesNotMatch(markup, /<script[^>]+src=|<link[^>]+href=|@import|url\((?!data:)/);
      // The CSP declared explicitly, with no origin in any list (hosts that
      // build the frame's policy from the declaration get no network either),
      // on the content and on the list's entry (the hosts' fallback).
      const NO_ORIGINS = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };
      assert.deepEqual(contents[0]._meta?.ui, { prefersBorder: true, csp: NO_ORIGINS });
      assert.deepEqual(resources[0]._meta?.ui?.csp, NO_ORIGINS);
    });

    test('resources/templates/list answers: no templates, for any client', async () => {
      for (const c of [plain, apps]) assert.deepEqual((await c.listResourceTemplates()).resourceTemplates, []);
    });

    test('a session file is readable as sagebox://session/ID/PATH by its owner only', async () => {
      const call = async (c, name, args) => {
        const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
        assert.equal(r.isError, false, `${name}: ${textOf(r)}`);
        return r.structuredContent;
      };
      const sid = (await call(apps, 'session_open', { lang: 'python' })).session_id;
      await call(apps, 'file_write', { session_id: sid, path: 'out/notes é.txt', content: 'résumé\n' });
      await call(apps, 'file_write', { session_id: sid, path: 'bytes.bin', content_base64: Buffer.from([0, 1, 2, 255]).toString('base64') });
      const uri = `sagebox://session/${sid}/out/notes%20%C3%A9.txt`;
      const text = (await plain.readResource({ uri })).contents[0];
      assert.deepEqual([text.uri, text.mimeType, text.text], [uri, 'text/plain', 'résumé\n']);
      const blob = (await apps.readResource({ uri: `sagebox://session/${sid}/bytes.bin` })).contents[0];
      assert.equal(blob.mimeType, 'application/octet-stream');
      assert.deepEqual([...Buffer.from(blob.blob, 'base64')], [0, 1, 2, 255]);
      // Another client gets the error an unknown session gets, naming nothing of alice's.
      const other = await bob.readResource({ uri }).then(() => null, (e) => e);
      const unknown = await bob.readResource({ uri: `sagebox://session/s_${'0'.repeat(32)}/out/x` }).then(() => null, (e) => e);
      assert.ok(other && unknown, 'bob is refused');
      assert.equal(other.code, -32002);
      assert.equal(other.message.replaceAll(sid, 'ID').replace(/out\/notes%20%C3%A9\.txt/, 'P'),
        unknown.message.replaceAll(`s_${'0'.repeat(32)}`, 'ID').replace('out/x', 'P'));
      // Paths that leave the workspace are refused before any sandbox is asked.
      for (const bad of ['../etc/passwd', '/etc/passwd', 'a/../../b', '%2e%2e/x', 'x%00y'])
        await assert.rejects(apps.readResource({ uri: `sagebox://session/${sid}/${bad}` }), /relative to \/work|-32602/);
      await call(apps, 'session_close', { session_id: sid });
    });
  });
}

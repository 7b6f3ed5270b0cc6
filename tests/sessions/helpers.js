// Helpers for the sessions suite: an SDK client (tests/mcp/helpers.js) and
// the session, file and job tools as small functions.
import assert from 'node:assert/strict';

export {
  BIN, sdkClient, closeClient, textOf, sleep, processesWith, waitFor, waitGone, waitPresent, uniqueMarker,
} from '../mcp/helpers.js';
export { jobReaches, jobEnded, ended } from '../lib/procs.mjs';
import { textOf } from '../mcp/helpers.js';

export const LONG = 180000; // a Sage session's first start, on a busy machine

// Call a tool; returns {r, text, s} (result, its text, structuredContent).
export async function call(c, name, args = {}, opts = {}) {
  const r = await c.client.callTool({ name, arguments: args }, undefined, { timeout: LONG, ...opts });
  return { r, text: textOf(r), s: r.structuredContent };
}

// The same, asserting success.
export async function ok(c, name, args = {}, opts = {}) {
  const out = await call(c, name, args, opts);
  assert.equal(out.r.isError, false, `${name}: ${out.text}`);
  return out;
}

// The same, asserting a tool error whose text matches re.
export async function fails(c, name, args, re) {
  const out = await call(c, name, args);
  assert.equal(out.r.isError, true, `${name} should fail: ${out.text}`);
  assert.match(out.text, re);
  return out;
}

// Arguments the schema refuses: a JSON-RPC error (-32602), or from
// 2025-11-25 on a tool error (SEP-1303); either way the message says why.
export async function refused(c, name, args, re) {
  let msg;
  try {
    const out = await call(c, name, args);
    assert.equal(out.r.isError, true, `${name} should be refused: ${out.text}`);
    msg = out.text;
  } catch (e) {
    msg = e.message;
  }
  assert.match(msg, re);
}

export async function open(c, lang = 'sage') {
  const { s } = await ok(c, 'session_open', { lang });
  assert.match(s.session_id, /^s_[a-z0-9-]{1,32}_[0-9a-f]{32}$/);
  assert.equal(s.lang, lang);
  assert.equal(s.workspace, '/work');
  return s.session_id;
}

const TOOL = { sage: 'run_sagemath', python: 'run_python', shell: 'run_shell' };

// Run code in a session; returns {r, text, s}.
export function run(c, sid, lang, code, extra = {}, opts = {}) {
  return call(c, TOOL[lang], { code, session_id: sid, ...extra }, opts);
}

// Its stdout, asserting it succeeded.
export async function out(c, sid, lang, code) {
  const res = await run(c, sid, lang, code);
  assert.equal(res.r.isError, false, res.text);
  return res.s.stdout;
}

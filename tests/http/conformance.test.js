// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in package.json) against `sagebox mcp --http`, once per protocol
// era: the scenarios revision 2025-11-25 requires (initialize handshake,
// sessions) and those 2026-07-28 requires (per-request _meta,
// server/discover, the request headers), plus the pending header
// validation scenarios (the standard headers, and the Mcp-Param-* headers
// of session_id and job_id, which sagebox marks with x-mcp-header). Every check must pass except those listed below as
// not applicable, each with its reason (docs/MCP.md has the same list).
// The suite cannot send a bearer token, so the server runs with
// --insecure-no-auth (loopback); the tokens are tested in abuse.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

import { startServer, tempDir } from './helpers.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

const FIXTURE = 'calls a fixture tool of the suite\'s reference "everything" server (test_*), which sagebox does not have; ' +
  'sagebox\'s own tools are driven by the SDK clients in sdk.test.js (text, errors, progress, logging, cancellation)';
const NO_PROMPTS = 'sagebox offers no prompts (prompts/* answer -32601 and the capability is not declared)';
const FIXTURE_RESOURCE = 'reads a fixture resource of the suite\'s reference server (test://static-text, test://template/123/data, ...), ' +
  'which sagebox does not have; sagebox\'s own resources (the viewer, a session\'s files) are read by the SDK clients in apps.test.js';
const NO_SUBSCRIBE = 'sagebox offers no resource subscriptions (its resources capability does not declare subscribe): ' +
  'a session\'s files change only when the client\'s own calls run';
const NO_INPUT = 'calls a fixture tool that asks the client for input (elicitation, sampling, roots: an InputRequiredResult); sagebox never needs input from the client';

// Whole scenarios that do not apply, and why.
export const NOT_APPLICABLE = {
  'completion-complete': 'argument completion is for prompts and resource templates; sagebox has neither (resources/templates/list is empty)',
  'tools-call-simple-text': FIXTURE,
  'tools-call-image': FIXTURE,
  'tools-call-audio': FIXTURE,
  'tools-call-embedded-resource': FIXTURE,
  'tools-call-mixed-content': FIXTURE,
  'tools-call-with-logging': FIXTURE,
  'tools-call-error': FIXTURE,
  'tools-call-with-progress': FIXTURE,
  'tools-call-sampling': FIXTURE,
  'tools-call-elicitation': FIXTURE,
  'elicitation-sep1034-defaults': NO_INPUT,
  'elicitation-sep1330-enums': NO_INPUT,
  'json-schema-2020-12': FIXTURE + ' (json_schema_2020_12_tool; pending in the suite)',
  'resources-read-text': FIXTURE_RESOURCE,
  'resources-read-binary': FIXTURE_RESOURCE,
  'resources-templates-read': FIXTURE_RESOURCE,
  'resources-subscribe': NO_SUBSCRIBE,
  'resources-unsubscribe': NO_SUBSCRIBE,
  'prompts-list': NO_PROMPTS,
  'prompts-get-simple': NO_PROMPTS,
  'prompts-get-with-args': NO_PROMPTS,
  'prompts-get-embedded-resource': NO_PROMPTS,
  'prompts-get-with-image': NO_PROMPTS,
  'input-required-result-basic-elicitation': NO_INPUT,
  'input-required-result-basic-sampling': NO_INPUT,
  'input-required-result-basic-list-roots': NO_INPUT,
  'input-required-result-request-state': NO_INPUT,
  'input-required-result-multiple-input-requests': NO_INPUT,
  'input-required-result-multi-round': NO_INPUT,
  'input-required-result-non-tool-request': NO_INPUT,
  'input-required-result-result-type': NO_INPUT,
  'input-required-result-tampered-state': NO_INPUT,
  'input-required-result-capability-check': NO_INPUT,
};
// Single checks that do not apply inside scenarios that otherwise do.
export const CHECKS_NOT_APPLICABLE = {
  'sep-2575-server-rejects-undeclared-capability': 'needs the fixture tool test_missing_capability; no sagebox tool needs a client capability',
  'sep-2575-missing-capability-http-400': 'the same fixture tool (test_missing_capability)',
  'sep-2575-http-server-no-independent-requests-on-stream': 'needs the fixture tool test_streaming_elicitation; sagebox sends no requests at all',
  'sep-2575-server-no-log-without-loglevel': 'needs the fixture tool test_logging_tool; sdk.test.js checks that a sagebox call without logLevel gets no log message',
  'sep-2549-prompts-list-caching-hints': NO_PROMPTS,
};
// Scenarios that must run and pass, per era (their presence is checked so a
// renamed scenario cannot pass by vanishing).
const MUST_PASS = {
  '2025-11-25': ['server-initialize', 'server-session-lifecycle', 'logging-set-level', 'ping', 'tools-list',
    'resources-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'],
  '2026-07-28': ['server-stateless', 'tools-list', 'resources-list', 'server-sse-multiple-streams', 'sep-2164-resource-not-found',
    'dns-rebinding-protection', 'caching', 'input-required-result-missing-input-response',
    'input-required-result-unsupported-methods', 'input-required-result-ignore-extra-params',
    'input-required-result-validate-input'],
};

function checksOf(dir) {
  const out = {};
  for (const d of readdirSync(dir)) {
    const file = path.join(dir, d, 'checks.json');
    if (!existsSync(file)) continue;
    const name = d.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    out[name] = JSON.parse(readFileSync(file, 'utf8'));
  }
  return out;
}

async function conformance(url, args) {
  const dir = tempDir('conformance');
  try {
    await run(process.execPath, [CLI, 'server', '--url', url, '-o', dir, ...args], { timeout: 900000, maxBuffer: 64 << 20 });
  } catch {
    // Exit status 1 when any scenario fails: the checks below decide.
  }
  return checksOf(dir);
}

function verdict(results, mustPass) {
  const problems = [];
  for (const name of mustPass) if (!results[name]) problems.push(`${name}: did not run`);
  for (const [name, checks] of Object.entries(results)) {
    if (NOT_APPLICABLE[name] || name.startsWith('tasks-')) continue;
    for (const c of checks)
      if (c.status === 'FAILURE' && !CHECKS_NOT_APPLICABLE[c.id])
        problems.push(`${name}: ${c.id}: ${c.errorMessage}`);
  }
  return problems;
}

for (const era of ['2025-11-25', '2026-07-28']) {
  test(`conformance suite, requirements of ${era}: every applicable check passes`, { timeout: 900000 }, async (t) => {
    const s = await startServer({ args: ['--insecure-no-auth'] });
    try {
      const results = await conformance(s.url, ['--requirements', era]);
      const headers = ['http-header-validation', 'http-custom-header-server-validation'];
      if (era === '2026-07-28')
        for (const scenario of headers)
          Object.assign(results, await conformance(s.url, ['--spec-version', era, '--scenario', scenario]));
      const problems = verdict(results, MUST_PASS[era].concat(era === '2026-07-28' ? headers : []));
      if (era === '2026-07-28') {
        // Every declared check of the custom-header scenario ran and passed
        // (a server without an x-mcp-header argument gets them "skipped").
        const custom = results['http-custom-header-server-validation'];
        assert.ok(custom.filter((c) => c.status === 'SUCCESS').length >= 6 &&
          custom.every((c) => c.status === 'SUCCESS'), JSON.stringify(custom.map((c) => [c.id, c.status])));
      }
      assert.deepEqual(problems, [], problems.join('\n'));
      const passed = Object.values(results).flat().filter((c) => c.status === 'SUCCESS').length;
      assert.ok(passed > 20, `only ${passed} checks passed`);
      // The counts, for the record (docs/MCP.md, Conformance).
      const na = (n) => NOT_APPLICABLE[n] || n.startsWith('tasks-');
      const applied = Object.keys(results).filter((n) => !na(n));
      const checks = applied.flatMap((n) => results[n]);
      const count = (st) => checks.filter((c) => c.status === st).length;
      t.diagnostic(`${era}: scenarios run ${Object.keys(results).length}: applicable ${applied.length} (all passed), ` +
        `not applicable ${Object.keys(results).length - applied.length}; checks of the applicable ones: ` +
        `${count('SUCCESS')} passed, ${count('FAILURE')} failed (each one listed as not applicable), ` +
        `${checks.length - count('SUCCESS') - count('FAILURE')} other (warnings, info, skipped)`);
    } finally {
      await s.stop();
    }
  });
}

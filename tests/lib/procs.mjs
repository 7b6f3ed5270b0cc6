// What every Node suite (tests/mcp, tests/http, tests/sessions) shares and
// that needs no package: where the binary is, the tools the server offers,
// and checks on the machine's processes (a marker in a process's argv says
// whether code a test started still runs).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.SAGEBOX_BIN || path.resolve(here, '../../build/sagebox');
// Every tool tools/list offers, sorted (the session, file and job tools
// beside the run, status and self-test tools), as a client without the MCP
// Apps extension sees it (interact_update, the viewer's own, is listed only
// with the extension: tests/http/interact.test.js).
export const TOOL_NAMES = [
  'file_export', 'file_list', 'file_read', 'file_write',
  'job_cancel', 'job_output', 'job_start', 'job_status',
  'run_python', 'run_sagemath', 'run_shell', 'sandbox_self_test', 'sandbox_status',
  'session_close', 'session_list', 'session_open', 'session_reset', 'session_save',
  'workspace_list',
];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function textOf(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// Processes whose command line contains `marker` (never this test process).
export function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let cmd;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    if (cmd.includes(marker)) found.push({ pid: Number(pid), cmd: cmd.replaceAll('\0', ' ') });
  }
  return found;
}

// Whether pred() became true within ms.
export async function waitFor(pred, ms = 30000, step = 100) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return true;
    await sleep(step);
  }
  return false;
}

// A background job's status once done(status) holds, read through status()
// until then; fails the test with the last status when it does not hold
// after ms.
export async function jobReaches(status, done, ms = 30000) {
  let st;
  const reached = await waitFor(async () => done(st = await status()), ms);
  assert.ok(reached, `the job is still ${st?.state} after ${ms} ms: ${JSON.stringify(st)}`);
  return st;
}

export const ended = (st) => st.state !== 'queued' && st.state !== 'running';

// A job's status once it has ended (neither queued nor running): a job's
// cancel is asynchronous (job_cancel: "job_status shows when it has
// ended"), and on a loaded machine its state can turn after its processes
// are gone.
export function jobEnded(status, ms = 30000) {
  return jobReaches(status, ended, ms);
}

// [] once no process carries marker, else those still there after ms.
export async function waitGone(marker, ms = 10000) {
  await waitFor(() => processesWith(marker).length === 0, ms);
  return processesWith(marker);
}

export function waitPresent(marker, ms = 30000) {
  return waitFor(() => processesWith(marker).length > 0, ms);
}

export function uniqueMarker(tag) {
  return `sbxmark-${tag}-${process.pid}-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
}

// Shell code that runs for `seconds` with `marker` in two processes' argv.
export function markedSleep(marker, seconds = 300) {
  return `sh -c 'sleep ${seconds}; true' ${marker} &\nsh -c 'sleep ${seconds}; true' ${marker}\nwait\n`;
}

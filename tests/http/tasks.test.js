// MCP Tasks driven by the official clients. Revision 2025-11-25:
// SDK v1's experimental tasks API (client.experimental.tasks) over stdio and
// over HTTP: a Sage job that runs longer than the client's request timeout
// is polled to its result; a task is the background job of the same id
// (job_status works on it); tasks/cancel and notifications/cancelled kill
// its processes; a task past its TTL is an error that says it expired and
// leaves no process; over HTTP one token's client can neither get nor cancel
// another token's task, and a task outlives the session that created it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, startServer, tokenFile, bearer, textOf, uniqueMarker, markedSleep, processesWith, waitFor, jobEnded }
  from './helpers.js';

const RUN_TOOLS = ['run_python', 'run_sagemath', 'run_shell'];

// Every message of a task-augmented call, to its end.
async function drain(client, params, options) {
  const seen = [];
  for await (const m of client.experimental.tasks.callToolStream(params, CallToolResultSchema, options)) seen.push(m);
  return seen;
}

// A task-augmented tools/call through the SDK; its CreateTaskResult.
function createTask(client, params, ttl) {
  return client.request({ method: 'tools/call', params }, CreateTaskResultSchema, { task: ttl ? { ttl } : {} });
}

async function v1Stdio() {
  const client = new ClientV1({ name: 'sagebox-tasks-v1', version: '1' });
  await client.connect(new StdioV1({ command: BIN, args: ['mcp'], env: process.env, stderr: 'ignore' }));
  return client;
}

async function v1Http(s, token) {
  const client = new ClientV1({ name: 'sagebox-tasks-v1-http', version: '1' });
  const transport = new HttpV1(new URL(s.url), bearer(token));
  await client.connect(transport);
  return { client, transport };
}

// What every era-2025-11-25 client sees, on either transport.
function commonTests(get) {
  test('declares tasks and which tools may run as one', async () => {
    const { client } = get();
    const caps = client.getServerCapabilities();
    assert.deepEqual(caps.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    for (const t of tools)
      assert.equal(t.execution?.taskSupport, RUN_TOOLS.includes(t.name) ? 'optional' : 'forbidden', t.name);
  });

  test('a Sage job longer than the request timeout is polled to its result', async () => {
    const { client } = get();
    const code = 'import time\ntime.sleep(5)\nprint(factor(2^64 + 1))';
    const started = Date.now();
    const seen = await drain(client, { name: 'run_sagemath', arguments: { code } }, { timeout: 3000, task: { ttl: 600000 } });
    const kinds = seen.map((m) => m.type);
    assert.equal(kinds[0], 'taskCreated', JSON.stringify(seen));
    assert.ok(kinds.includes('taskStatus'));
    const last = seen.at(-1);
    assert.equal(last.type, 'result', JSON.stringify(last));
    assert.ok(Date.now() - started > 5000, 'it ran longer than the 3 s request timeout');
    assert.match(textOf(last.result), /^274177 \* 67280421310721\n/);
    assert.equal(last.result.isError, false);
    assert.equal(last.result.structuredContent.ok, true);
    const taskId = seen[0].task.taskId;
    assert.equal(seen[0].task.ttl, 600000);
    assert.equal(last.result._meta['io.modelcontextprotocol/related-task'].taskId, taskId);
    // The task is the background job of the same id.
    const st = await client.callTool({ name: 'job_status', arguments: { job_id: taskId } });
    assert.equal(st.structuredContent.state, 'done', textOf(st));
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((t) => t.taskId === taskId && t.status === 'completed'));
  });

  test('a failing job is a failed task whose result says why', async () => {
    const { client } = get();
    const created = await createTask(client, { name: 'run_shell', arguments: { code: 'echo oops >&2; exit 3' } });
    const r = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    assert.equal(r.isError, true);
    assert.match(textOf(r), /oops\n[\s\S]*exit status 3/);
    assert.equal((await client.experimental.tasks.getTask(created.task.taskId)).status, 'failed');
  });

  test('tasks/cancel stops the job: its processes are gone', async () => {
    const { client } = get();
    const marker = uniqueMarker('task-cancel');
    const created = await createTask(client, { name: 'run_shell', arguments: { code: markedSleep(marker) } });
    const taskId = created.task.taskId;
    assert.equal(created.task.status, 'working');
    assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job runs');
    const c = await client.experimental.tasks.cancelTask(taskId);
    assert.equal(c.status, 'cancelled');
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), 'its processes were killed');
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'cancelled');
    await assert.rejects(client.experimental.tasks.cancelTask(taskId), (e) => e.code === -32602 && /already cancelled/.test(e.message));
    const st = await jobEnded(async () =>
      (await client.callTool({ name: 'job_status', arguments: { job_id: taskId } })).structuredContent, 15000);
    assert.equal(st.state, 'cancelled', JSON.stringify(st));
  });

  test('an unknown task is -32602; a forbidden tool as a task is -32601', async () => {
    const { client } = get();
    await assert.rejects(client.experimental.tasks.getTask('j_00000000000000000000000000000000'),
      (e) => e.code === -32602 && /Task not found/.test(e.message));
    await assert.rejects(createTask(client, { name: 'sandbox_status', arguments: {} }),
      (e) => e.code === -32601 && /taskSupport is "forbidden"/.test(e.message));
  });

  test('past its TTL a task is an error saying it expired, and its job is stopped', async () => {
    const { client } = get();
    const marker = uniqueMarker('task-ttl');
    const created = await createTask(client, { name: 'run_shell', arguments: { code: markedSleep(marker) } }, 1500);
    assert.equal(created.task.ttl, 1500);
    assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job runs');
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), 'its processes were killed at its TTL');
    await assert.rejects(client.experimental.tasks.getTask(created.task.taskId),
      (e) => e.code === -32602 && /Task has expired/.test(e.message));
  });
}

describe('SDK v1 tasks over stdio (2025-11-25)', { timeout: 600000 }, () => {
  let client;
  before(async () => { client = await v1Stdio(); });
  after(async () => { await client?.close(); });
  commonTests(() => ({ client }));

  test('notifications/cancelled of the creating request stops the task', async () => {
    const marker = uniqueMarker('task-notif');
    const requestId = client._requestMessageId; // the id the SDK gives its next request
    const created = await createTask(client, { name: 'run_shell', arguments: { code: markedSleep(marker) } });
    assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job runs');
    await client.notification({ method: 'notifications/cancelled', params: { requestId, reason: 'test' } });
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000), 'its processes were killed');
    assert.equal((await client.experimental.tasks.getTask(created.task.taskId)).status, 'cancelled');
  });

  test('status notifications arrive when a task ends', async () => {
    const { TaskStatusNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const got = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => got.push(n.params));
    const created = await createTask(client, { name: 'run_shell', arguments: { code: 'echo done' } });
    assert.ok(await waitFor(() => got.some((p) => p.taskId === created.task.taskId), 15000), JSON.stringify(got));
    assert.equal(got.find((p) => p.taskId === created.task.taskId).status, 'completed');
  });
});

describe('SDK v1 tasks over HTTP (2025-11-25)', { timeout: 600000 }, () => {
  let s, a, b;
  before(async () => {
    s = await startServer({ args: ['--token-file', tokenFile({ alice: 'token-alice-1234567890', bob: 'token-bob-1234567890' })] });
    a = await v1Http(s, 'token-alice-1234567890');
    b = await v1Http(s, 'token-bob-1234567890');
  });
  after(async () => {
    await a?.client.close();
    await b?.client.close();
    if (s) await s.stop();
  });
  commonTests(() => a);

  test("one client can neither get nor cancel another's task", async () => {
    const marker = uniqueMarker('task-owner');
    const created = await createTask(a.client, { name: 'run_shell', arguments: { code: markedSleep(marker, 20) } });
    const taskId = created.task.taskId;
    assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job runs');
    await assert.rejects(b.client.experimental.tasks.getTask(taskId), (e) => e.code === -32602 && /Task not found/.test(e.message));
    await assert.rejects(b.client.experimental.tasks.cancelTask(taskId), (e) => e.code === -32602 && /Task not found/.test(e.message));
    await assert.rejects(b.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema), (e) => e.code === -32602);
    assert.deepEqual((await b.client.experimental.tasks.listTasks()).tasks.filter((t) => t.taskId === taskId), []);
    const st = await b.client.callTool({ name: 'job_status', arguments: { job_id: taskId } });
    assert.equal(st.isError, true, 'nor its job');
    assert.ok(processesWith(marker).length > 0, 'it still runs');
    assert.equal((await a.client.experimental.tasks.cancelTask(taskId)).status, 'cancelled');
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 15000));
  });

  test('a task outlives the session that created it, until its TTL', async () => {
    const marker = uniqueMarker('task-gone');
    const first = await v1Http(s, 'token-alice-1234567890');
    const created = await createTask(first.client, { name: 'run_shell', arguments: { code: markedSleep(marker) } }, 6000);
    assert.ok(await waitFor(() => processesWith(marker).length > 0), 'the job runs');
    await first.transport.terminateSession();
    await first.client.close();
    // Another session of the same client still sees it, running.
    const t = await a.client.experimental.tasks.getTask(created.task.taskId);
    assert.equal(t.status, 'working');
    assert.ok(processesWith(marker).length > 0, 'the session ended, the task runs on');
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 20000), 'at its TTL nothing is left');
    await assert.rejects(a.client.experimental.tasks.getTask(created.task.taskId), (e) => /expired/.test(e.message));
  });
});

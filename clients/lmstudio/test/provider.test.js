// The plugin's tools provider against a real `sagebox mcp` (SAGEBOX_BIN, or
// the release build), with the smallest controller that supplies the two
// settings screens and a working directory. LM Studio itself is not here:
// what it does with the tools (showing them, calling them from a model) is
// not tested. Run after `tsc` (npm test does both).
const { test, after } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const { toolsProvider } = require("../dist/toolsProvider.js");
const { stopServer } = require("../dist/server.js");

const SAGEBOX = path.resolve(process.env.SAGEBOX_BIN || path.join(__dirname, "../../../build/sagebox"));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sagebox-lmstudio-"));

after(async () => {
  await stopServer();
  fs.rmSync(dir, { recursive: true, force: true });
});

// What LM Studio's ToolsProviderController gives a provider: each screen's
// values through get(key) (unset keys: the screen's default, undefined here).
function controller(plugin = {}, global = {}) {
  const screen = (values) => ({ get: (key) => values[key] });
  return {
    getPluginConfig: () => screen(plugin),
    getGlobalPluginConfig: () => screen({ sageboxExecutable: SAGEBOX, ...global }),
    getWorkingDirectory: () => dir,
  };
}

function callContext(signal = new AbortController().signal) {
  return { status() {}, warn() {}, signal, callId: 1 };
}

async function call(tools, name, args, signal) {
  const t = tools.find((x) => x.name === name);
  assert.ok(t, `tool ${name} is listed`);
  return t.implementation(args, callContext(signal));
}

// The pids of the `sagebox mcp` children of this process.
function serverPids() {
  const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return out.split("\n").filter((l) => l.includes(" mcp ")).map((l) => Number(l.trim().split(/\s+/)[0]));
}

test("the tools are sagebox's own: names, descriptions and schemas as tools/list gives them", async () => {
  const transport = new StdioClientTransport({ command: SAGEBOX, args: ["mcp"], stderr: "ignore" });
  const direct = new Client({ name: "direct", version: "1" });
  await direct.connect(transport);
  const listed = (await direct.listTools()).tools;
  await direct.close();

  const tools = await toolsProvider(controller());
  assert.deepEqual(tools.map((t) => t.name), listed.map((t) => t.name));
  for (const [i, t] of tools.entries()) {
    assert.equal(t.type, "rawFunction");
    assert.equal(t.description, listed[i].description);
    assert.deepEqual(t.parametersJsonSchema, listed[i].inputSchema);
  }
  assert.ok(tools.some((t) => t.name === "run_sagemath"));
});

test("a call's result is passed through: the text sagebox answers", async () => {
  const tools = await toolsProvider(controller());
  assert.equal(await call(tools, "run_python", { code: "print(6*7)" }), "42\n\n[exit status 0]");
  const sage = await call(tools, "run_sagemath", { code: "R.<x> = QQ[]\nprint(factor(x^4 - 1))" });
  assert.match(sage, /^\(x - 1\) \* \(x \+ 1\) \* \(x\^2 \+ 1\)/);
  const failed = await call(tools, "run_python", { code: "raise SystemExit(3)" });
  assert.match(failed, /exit status 3/);
});

test("the settings screen reaches sagebox, and a change restarts it", async () => {
  const first = await toolsProvider(controller({ memory: "2g", timeoutSeconds: 45 }));
  const status = await call(first, "sandbox_status", {});
  assert.match(status, /settings +timeout 45 s, memory 2g, cpus 1, pids 96/);
  const before = serverPids();
  assert.equal(before.length, 1, `one sagebox mcp runs: ${before}`);

  const second = await toolsProvider(controller({ memory: "512m", cpus: 0.5, pids: 64, timeoutSeconds: 45 }));
  assert.match(await call(second, "sandbox_status", {}), /memory 512m, cpus 0.5, pids 64/);
  const now = serverPids();
  assert.equal(now.length, 1, `the old server is gone, one runs: ${now}`);
  assert.notEqual(now[0], before[0], "a new server for the new settings");

  // the same settings again: the same server
  await toolsProvider(controller({ memory: "512m", cpus: 0.5, pids: 64, timeoutSeconds: 45 }));
  assert.deepEqual(serverPids(), now);

  // a call reads its controller's settings when it runs: the first list's
  // call goes to a server with the first settings again
  assert.match(await call(first, "sandbox_status", {}), /memory 2g/);
  assert.equal(serverPids().length, 1);
});

test("the timeout and output limit settings hold", async () => {
  const tools = await toolsProvider(controller({ timeoutSeconds: 1, outputLimitKiB: 16 }));
  const slow = await call(tools, "run_python", { code: "import time\ntime.sleep(30)" });
  assert.match(slow, /^Error: /);
  assert.match(slow, /timed out|time limit/i);
  const flood = await call(tools, "run_python", { code: "print('x' * 100000)" });
  assert.ok(flood.length < 40000, `output was cut to about 16 KiB, got ${flood.length}`);
});

test("sessions off: sagebox refuses session_open", async () => {
  const tools = await toolsProvider(controller({ sessions: false }));
  const r = await call(tools, "session_open", {});
  assert.match(r, /^Error: /);
  assert.match(r, /max_sessions|sessions are off/i);
  const on = await toolsProvider(controller({ sessions: true }));
  const opened = await call(on, "session_open", {});
  assert.doesNotMatch(opened, /^Error/);
  const id = /s_[a-z0-9-]+_[0-9a-f]{32}/.exec(opened)[0];
  assert.doesNotMatch(await call(on, "session_close", { session_id: id }), /^Error/);
});

test("a figure is saved in the chat's working directory and named", async () => {
  const tools = await toolsProvider(controller());
  const r = await call(tools, "run_python", {
    code: "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",
  });
  const m = /\[figure saved: (.*\.png)\]/.exec(r);
  assert.ok(m, `a saved figure is named: ${r}`);
  assert.equal(fs.readFileSync(m[1]).subarray(1, 4).toString(), "PNG");
});

test("cancelling a call (LM Studio's abort) ends it at once", async () => {
  const tools = await toolsProvider(controller());
  const ac = new AbortController();
  const t0 = Date.now();
  setTimeout(() => ac.abort(), 1000);
  await assert.rejects(call(tools, "run_python", { code: "import time\ntime.sleep(60)" }, ac.signal));
  assert.ok(Date.now() - t0 < 10000, "the call ended soon after the abort");
});

test("bad settings: the error names the problem and the fix", async () => {
  await assert.rejects(toolsProvider(controller({}, { sageboxExecutable: "/nonexistent/sagebox" })),
    /could not start '\/nonexistent\/sagebox mcp.*Install sagebox.*global settings/);
  await assert.rejects(toolsProvider(controller({ cpus: 9 })), /cpus.*0\.1-4/s);
  // and the next good settings work again
  const tools = await toolsProvider(controller());
  assert.equal(await call(tools, "run_python", { code: "print(1)" }), "1\n\n[exit status 0]");
});

test("keep warm: sagebox runs as its user-level service, and a restart finds the same warm sandbox", async () => {
  // A runtime and a state directory of the test's own: the service's
  // socket and its log (which names its pid, to end it here).
  const run = fs.mkdtempSync(path.join(os.tmpdir(), "sagebox-lmstudio-run-"));
  const state = fs.mkdtempSync(path.join(os.tmpdir(), "sagebox-lmstudio-state-"));
  const saved = { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
  process.env.XDG_RUNTIME_DIR = run;
  process.env.XDG_STATE_HOME = state;
  // What tells one sandbox from another: its /tmp's device and its init's start time.
  const probe = "import os\nprint('sandbox', os.stat('/tmp').st_dev, " +
    "open('/proc/1/stat').read().rsplit(')', 1)[1].split()[19])\n";
  const sandboxOf = (text) => {
    const m = /sandbox (\d+) (\d+)/.exec(text);
    assert.ok(m, `the probe printed: ${text}`);
    return m[0];
  };
  try {
    const tools = await toolsProvider(controller({}, { keepWarm: true }));
    const first = sandboxOf(await call(tools, "run_sagemath", { code: probe }));
    assert.ok(fs.readdirSync(path.join(run, "sagebox")).some((f) => f.endsWith(".sock")), "the service listens");
    await stopServer(); // LM Studio closes; the service stays
    const again = await toolsProvider(controller({}, { keepWarm: true }));
    assert.equal(sandboxOf(await call(again, "run_sagemath", { code: probe })), first,
      "the restarted plugin's first call ran in the same warm sandbox");
  } finally {
    await stopServer();
    const log = path.join(state, "sagebox", "service.log");
    const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
    for (const m of text.matchAll(/service: pid (\d+) listening/g)) {
      try { process.kill(Number(m[1]), "SIGTERM"); } catch { /* gone already */ }
    }
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    for (let i = 0; i < 100 && fs.existsSync(path.join(run, "sagebox")) &&
      fs.readdirSync(path.join(run, "sagebox")).some((f) => f.endsWith(".sock")); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    fs.rmSync(run, { recursive: true, force: true });
    fs.rmSync(state, { recursive: true, force: true });
  }
});

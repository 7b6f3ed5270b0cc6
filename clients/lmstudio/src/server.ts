// One `sagebox mcp` child per set of settings, through the official MCP
// client over stdio. When the settings change, the next use closes the old
// server (its sandboxes and sessions end with it) and starts a new one.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { executable, sageboxArgs, type Settings } from "./settings";

// What sagebox gets of LM Studio's environment: enough to find programs,
// its config and token, and Podman's runtime directory; no API keys.
const PASSED_ENV = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "XDG_RUNTIME_DIR",
  "XDG_CONFIG_HOME", "XDG_STATE_HOME", "DBUS_SESSION_BUS_ADDRESS"];

export interface Server {
  key: string;
  command: string;
  args: string[];
  client: Client;
  stderr: string[];
}

let current: Promise<Server> | undefined;
let currentKey = "";

async function start(command: string, args: string[], key: string): Promise<Server> {
  const env: Record<string, string> = {};
  for (const k of PASSED_ENV) if (process.env[k] !== undefined) env[k] = process.env[k] as string;
  const transport = new StdioClientTransport({ command, args, env, stderr: "pipe" });
  const stderr: string[] = [];
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr.push(chunk.toString("utf8"));
    if (stderr.length > 50) stderr.shift();
  });
  const client = new Client({ name: "sagebox-lmstudio", version: "0.1.0" });
  try {
    await client.connect(transport);
  } catch (e) {
    await transport.close().catch(() => undefined);
    const why = e instanceof Error ? e.message : String(e);
    const said = stderr.join("").trim();
    throw new Error(
      `could not start '${command} ${args.join(" ")}': ${said || why}. ` +
      (/ENOENT/.test(why)
        ? "Install sagebox (the Debian package puts it in /usr/bin) or set its path in the plugin's global settings."
        : "Fix the plugin's settings; `sagebox --help-settings` lists the allowed values."));
  }
  return { key, command, args, client, stderr };
}

// The server for these settings: the running one if they did not change.
export function serverFor(s: Settings): Promise<Server> {
  const command = executable(s);
  const args = sageboxArgs(s);
  const key = JSON.stringify([command, args]);
  if (current && key === currentKey) return current;
  const old = current;
  currentKey = key;
  current = (async () => {
    if (old) await stop(old);
    return start(command, args, key);
  })();
  current.catch(() => {
    // a failed start is tried again on the next use
    if (currentKey === key) { current = undefined; currentKey = ""; }
  });
  return current;
}

async function stop(p: Promise<Server>): Promise<void> {
  const old = await p.catch(() => undefined);
  if (old) await old.client.close().catch(() => undefined);
}

// Ends the running server (tests; LM Studio ends the plugin's process).
export async function stopServer(): Promise<void> {
  const old = current;
  current = undefined;
  currentKey = "";
  if (old) await stop(old);
}

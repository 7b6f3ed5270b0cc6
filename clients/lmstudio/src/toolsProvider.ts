// The tools provider: sagebox's own tools, as `sagebox mcp` lists them
// (names, descriptions, JSON schemas: no copy of them here), each call passed
// to it and its result passed back.
import { mkdir, writeFile } from "fs/promises";
import { join } from "path";

import { rawFunctionTool, type Tool, type ToolsProviderController } from "@lmstudio/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { configSchematics, globalConfigSchematics } from "./config";
import { serverFor } from "./server";
import { readSettings, type Settings } from "./settings";

// The smallest part of LM Studio's controller the provider uses.
export type Controller = Pick<ToolsProviderController, "getPluginConfig" | "getGlobalPluginConfig" | "getWorkingDirectory">;

function settingsOf(ctl: Controller): Settings {
  return readSettings(ctl.getPluginConfig(configSchematics), ctl.getGlobalPluginConfig(globalConfigSchematics));
}

let figureCount = 0;
const CALL_LIMIT_MS = (600 + 60) * 1000;

// A tool result for the model: the text parts as sagebox wrote them (its
// figure lines included); an image part, which an LM Studio tool result
// cannot carry, is saved in the chat's working directory and named.
export async function resultText(result: CallToolResult, ctl: Controller): Promise<string> {
  const parts: string[] = [];
  for (const c of result.content ?? []) {
    if (c.type === "text") {
      parts.push(c.text);
    } else if (c.type === "image") {
      let dir: string | undefined;
      try { dir = ctl.getWorkingDirectory(); } catch { dir = undefined; }
      if (!dir) {
        parts.push(`[an image (${c.mimeType}) that this chat has no working directory to save]`);
        continue;
      }
      await mkdir(dir, { recursive: true });
      const ext = c.mimeType === "image/png" ? "png" : c.mimeType.split("/")[1] ?? "bin";
      const path = join(dir, `sagebox-figure-${process.pid}-${++figureCount}.${ext}`);
      await writeFile(path, Buffer.from(c.data, "base64"), { flag: "wx" });
      parts.push(`[figure saved: ${path}]`);
    } else {
      parts.push(JSON.stringify(c));
    }
  }
  const text = parts.join("\n");
  return result.isError ? `Error: ${text}` : text;
}

export async function toolsProvider(ctl: Controller): Promise<Tool[]> {
  const settings = settingsOf(ctl);
  const server = await serverFor(settings);
  const { tools } = await server.client.listTools();
  return tools.map((t) => rawFunctionTool({
    name: t.name,
    description: t.description ?? "",
    parametersJsonSchema: t.inputSchema,
    implementation: async (params, ctx) => {
      // the settings of this call's chat: a changed screen restarts sagebox
      const s = await serverFor(settingsOf(ctl));
      ctx.status(`sagebox: ${t.name}`);
      // sagebox ends every call by its own time limit (600 s at most); this
      // bound only catches a server that stopped answering
      const result = await s.client.callTool({ name: t.name, arguments: params }, undefined, {
        signal: ctx.signal, timeout: CALL_LIMIT_MS, resetTimeoutOnProgress: true,
        onprogress: (p) => { if (p.message) ctx.status(p.message); },
      }) as CallToolResult;
      return resultText(result, ctl);
    },
  }));
}

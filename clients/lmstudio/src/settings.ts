// The settings screens' values as `sagebox mcp` flags. Nothing is clamped
// here: sagebox refuses a value out of range, naming it, and that message
// reaches LM Studio as the error of the tools provider.
import { defaults } from "./config";

export type Settings = typeof defaults;

export interface ConfigSource {
  get(key: string): unknown;
}

// The keys of the global screen; the rest are per chat.
const GLOBAL_KEYS = ["sageboxExecutable", "image", "keepWarm"];

// Reads each key of `defaults` from the two screens (per chat, global).
export function readSettings(plugin: ConfigSource, global: ConfigSource): Settings {
  const s: Record<string, unknown> = { ...defaults };
  for (const key of Object.keys(defaults)) {
    const src = GLOBAL_KEYS.includes(key) ? global : plugin;
    const v = src.get(key);
    if (v !== undefined) s[key] = v;
  }
  return s as Settings;
}

export function executable(s: Settings): string {
  return s.sageboxExecutable.trim() || "sagebox";
}

export function sageboxArgs(s: Settings): string[] {
  const args = [
    "mcp",
    "--timeout", String(s.timeoutSeconds),
    "--memory", s.memory,
    "--cpus", String(s.cpus),
    "--pids", String(s.pids),
    "--output-limit-kib", String(s.outputLimitKiB),
    "--backend", s.backend,
  ];
  if (s.image.trim()) args.push("--image", s.image.trim());
  if (!s.sessions) args.push("--max-sessions", "0", "--max-jobs", "0");
  if (s.keepWarm) args.push("--service");
  return args;
}

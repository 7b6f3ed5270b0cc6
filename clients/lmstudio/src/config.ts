// The plugin's settings screens, in the seed's form: per chat (the seed's
// timeout, memory, CPUs, pids and output limit, plus backend and sessions)
// and global (the sagebox executable, the container image, keeping Sage
// warm between LM Studio restarts). Each is passed
// to `sagebox mcp` as its flag (settings.ts); sagebox checks every value
// again and refuses one out of range with a message naming it.
import { createConfigSchematics } from "@lmstudio/sdk";

// The defaults: sagebox's own (sagebox --help-settings).
export const defaults = {
  timeoutSeconds: 30,
  memory: "256m",
  cpus: 1,
  pids: 96,
  outputLimitKiB: 256,
  backend: "auto",
  sessions: true,
  sageboxExecutable: "",
  image: "",
  keepWarm: false,
};

export const MEMORY_LIMITS = ["256m", "512m", "1g", "2g", "4g", "8g"];
// Not `host`: it runs the model's code with no isolation at all; who wants
// it passes --backend host to sagebox by hand.
export const BACKENDS = ["auto", "native", "podman", "docker"];

export const configSchematics = createConfigSchematics()
  .field("timeoutSeconds", "numeric", {
    displayName: "Default timeout (seconds)",
    hint: "Wall-clock limit of a call that does not give its own (1-600).",
    int: true, min: 1, max: 600, slider: { min: 1, max: 600, step: 1 },
  }, defaults.timeoutSeconds)
  .field("memory", "select", {
    displayName: "Memory limit",
    hint: "Memory of one sandbox.",
    options: MEMORY_LIMITS,
  }, defaults.memory)
  .field("cpus", "numeric", {
    displayName: "CPU limit (cores)",
    hint: "0.1-4 cores.",
    min: 0.1, max: 4, step: 0.1, precision: 1, slider: { min: 0.1, max: 4, step: 0.1 },
  }, defaults.cpus)
  .field("pids", "numeric", {
    displayName: "Process limit",
    hint: "Processes and threads in one sandbox (16-512).",
    int: true, min: 16, max: 512,
  }, defaults.pids)
  .field("outputLimitKiB", "numeric", {
    displayName: "Output limit (KiB per stream)",
    hint: "Output kept of stdout and of stderr, head and tail (16-2048).",
    int: true, min: 16, max: 2048,
  }, defaults.outputLimitKiB)
  .field("backend", "select", {
    displayName: "Sandbox backend",
    hint: "auto: the native sandbox; podman/docker: a rootless container of the image below.",
    options: BACKENDS,
  }, defaults.backend)
  .field("sessions", "boolean", {
    displayName: "Sessions and background jobs",
    hint: "Let the model keep a sandbox between calls (session_*, file_*, job_* tools).",
  }, defaults.sessions)
  .build();

export const globalConfigSchematics = createConfigSchematics()
  .field("sageboxExecutable", "string", {
    displayName: "sagebox executable",
    hint: "Path of sagebox; empty: found on PATH (the Debian package installs /usr/bin/sagebox).",
    placeholder: "sagebox",
  }, defaults.sageboxExecutable)
  .field("image", "string", {
    displayName: "Container image (podman/docker backends)",
    hint: "Empty: sagebox's default. `sagebox image build` makes one from Debian packages.",
    placeholder: "docker.io/sagemath/sagemath:latest",
  }, defaults.image)
  .field("keepWarm", "boolean", {
    displayName: "Keep Sage warm between LM Studio restarts",
    hint: "sagebox's user-level service (--service): the first call after a restart finds Sage already " +
      "imported. It keeps a warm worker (~360 MiB) up to 10 minutes after LM Studio closes.",
  }, defaults.keepWarm)
  .build();

// LM Studio plugin entry: the settings screens and the tools provider.
import { type PluginContext } from "@lmstudio/sdk";

import { configSchematics, globalConfigSchematics } from "./config";
import { toolsProvider } from "./toolsProvider";

export async function main(context: PluginContext) {
  context.withConfigSchematics(configSchematics);
  context.withGlobalConfigSchematics(globalConfigSchematics);
  context.withToolsProvider(toolsProvider);
}

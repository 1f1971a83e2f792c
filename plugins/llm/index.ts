import { llmRef } from '../../core/contracts/llm';
import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { OpenAiCompatible, type Endpoint } from './client';

/**
 * Provides the LLM client (core/contracts/llm.ts) to the plugins that word or plan with a
 * model. It reads the same settings as the llm kernel (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL),
 * so one endpoint is configured once. It serves no routes of its own.
 */
export default definePlugin({
  id: 'llm',
  prefix: '',
  deps: {},
  provides: [
    provide(llmRef, {
      deps: { config: core.config },
      factory: ({ config }) => new OpenAiCompatible((config.mesh.settings.llm ?? {}) as Endpoint),
    }),
  ],
  routes: () => [],
});

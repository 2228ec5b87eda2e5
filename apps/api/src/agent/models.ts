import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { openaiApiKey } from '../platform/config';
import { createLocalModel } from './localModel';

export interface ChatModelConfig {
  chatModel: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  localModelDelayMs: number;
}

const OPENAI_PREFIX = 'openai:';

export function resolveChatModel(config: ChatModelConfig): LanguageModelV4 {
  const chatModel = config.chatModel.trim();
  if (chatModel === 'local') return createLocalModel({ defaultDelayMs: config.localModelDelayMs });

  if (chatModel.startsWith(OPENAI_PREFIX)) {
    const modelId = chatModel.slice(OPENAI_PREFIX.length).trim();
    if (!modelId)
      throw new Error(`CHAT_MODEL "${config.chatModel}" names no model; use e.g. "openai:gpt-4o-mini".`);
    const baseURL = config.openaiBaseUrl?.trim() || undefined;
    const apiKey = openaiApiKey(config.openaiApiKey, baseURL);
    if (!apiKey) {
      throw new Error(
        `CHAT_MODEL "${config.chatModel}" needs OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible local server).`,
      );
    }
    // Chat completions, not the Responses API, because that is what compatible servers implement.
    return createOpenAI({ apiKey, baseURL }).chat(modelId);
  }

  throw new Error(`Unknown CHAT_MODEL "${config.chatModel}": expected "local" or "openai:<model>".`);
}

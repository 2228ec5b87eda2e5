import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ChatModel } from '@chat/contracts';
import { type ModelSpec, openaiApiKey } from '../platform/modelList';
import { createLocalModel } from './localModel';
import { encodingOfModel, type TokenEncoding } from './tokenCount';

/** The tokens a configured model counts in: the local model its words, an OpenAI model its encoding. */
export function tokenEncodingOf(spec: ModelSpec): TokenEncoding {
  return spec.kind === 'local' ? encodingOfModel('local') : encodingOfModel(`openai:${spec.model}`);
}

/** The language model of one configured entry (M1). */
export function languageModelOf(spec: ModelSpec, localModelDelayMs: number): LanguageModelV4 {
  if (spec.kind === 'local') return createLocalModel({ defaultDelayMs: localModelDelayMs });
  // Chat completions, not the Responses API, because that is what compatible servers implement.
  return createOpenAI({ apiKey: spec.apiKey, ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}) }).chat(
    spec.model,
  );
}

/**
 * The models the API offers (M1), each built once at start; the first is the default. A chat names
 * its model by id; an id no longer configured is `undefined` here, and its turn fails (never a
 * silent fallback to another model).
 */
export class ModelRegistry {
  private readonly byId: Map<string, { spec: ModelSpec; model: LanguageModelV4 }>;
  readonly defaultId: string;
  private readonly documentTokens: number;

  constructor(
    specs: ModelSpec[],
    options: {
      localModelDelayMs: number;
      wrap?: (model: LanguageModelV4, spec: ModelSpec) => LanguageModelV4;
      /** The most tokens of documents' text one message gives a model (D1; default none). */
      documentTokens?: number;
    },
  ) {
    const [first] = specs;
    if (!first) throw new Error('no model is configured');
    this.defaultId = first.id;
    this.documentTokens = options.documentTokens ?? 0;
    this.byId = new Map(
      specs.map((spec) => {
        const model = languageModelOf(spec, options.localModelDelayMs);
        return [spec.id, { spec, model: options.wrap ? options.wrap(model, spec) : model }];
      }),
    );
  }

  /** What `GET /api/models` lists: never a key or a URL. */
  list(): ChatModel[] {
    return [...this.byId.values()].map(({ spec }) => ({
      id: spec.id,
      label: spec.label,
      contextWindow: spec.contextWindow,
      documentTokens: this.documentTokens,
      builtIn: spec.kind === 'local',
    }));
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** The model called for `id`, or undefined when it is not (or no longer) configured. */
  model(id: string): LanguageModelV4 | undefined {
    return this.byId.get(id)?.model;
  }

  /** The default model: calls that belong to no chat's choice (a compaction's summary). */
  defaultModel(): LanguageModelV4 {
    return this.byId.get(this.defaultId)?.model as LanguageModelV4;
  }

  /** The context window of `id`; the default's for an id no longer configured. */
  contextWindow(id: string | null | undefined): number {
    const spec = (id ? this.byId.get(id) : undefined) ?? this.byId.get(this.defaultId);
    return spec?.spec.contextWindow ?? 0;
  }

  /**
   * The encoding the context meter counts every chat in: the default model's (stored counts are
   * kept per encoding, so one for all models lets a count serve every chat; ADR-027).
   */
  encoding(): TokenEncoding {
    const spec = this.byId.get(this.defaultId)?.spec;
    return spec ? tokenEncodingOf(spec) : encodingOfModel('local');
  }

  /** The id a chat with `choice` runs with: its own choice, or the default when it made none. */
  resolve(choice: string | null | undefined): string {
    return choice ?? this.defaultId;
  }
}

/** One model named like `CHAT_MODEL` (`local` or `openai:<model>`): the eval profile's judge. */
export function resolveChatModel(config: {
  chatModel: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  localModelDelayMs: number;
}): LanguageModelV4 {
  const chatModel = config.chatModel.trim();
  if (chatModel === 'local') return createLocalModel({ defaultDelayMs: config.localModelDelayMs });
  if (!chatModel.startsWith('openai:'))
    throw new Error(`Unknown CHAT_MODEL "${config.chatModel}": expected "local" or "openai:<model>".`);
  const model = chatModel.slice('openai:'.length).trim();
  if (!model)
    throw new Error(`CHAT_MODEL "${config.chatModel}" names no model; use e.g. "openai:gpt-4o-mini".`);
  const baseUrl = config.openaiBaseUrl?.trim() || undefined;
  const apiKey = openaiApiKey(config.openaiApiKey, baseUrl);
  if (!apiKey) {
    throw new Error(
      `CHAT_MODEL "${config.chatModel}" needs OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible local server).`,
    );
  }
  return languageModelOf(
    {
      kind: 'openai',
      id: chatModel,
      label: chatModel,
      contextWindow: 0,
      model,
      apiKey,
      ...(baseUrl ? { baseUrl } : {}),
    },
    config.localModelDelayMs,
  );
}

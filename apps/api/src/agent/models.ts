import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ChatModel } from '@chat/contracts';
import { isModelId, type ModelSource, type ModelSpec, openaiApiKey } from '../platform/modelList';
import { createLocalModel } from './localModel';
import { encodingOfModel, type TokenEncoding } from './tokenCount';

/**
 * The tokens a configured model counts in: the local model its words, a remote model an OpenAI
 * encoding (other providers' tokenizers are not public; o200k is close enough for a meter).
 */
export function tokenEncodingOf(spec: ModelSpec): TokenEncoding {
  return spec.kind === 'local' ? encodingOfModel('local') : encodingOfModel(`openai:${spec.model}`);
}

/** The language model of one configured entry (M1): each provider through its own AI SDK package. */
export function languageModelOf(spec: ModelSpec, localModelDelayMs: number): LanguageModelV4 {
  if (spec.kind === 'local') return createLocalModel({ defaultDelayMs: localModelDelayMs });
  const baseURL = spec.baseUrl ? { baseURL: spec.baseUrl } : {};
  switch (spec.kind) {
    case 'anthropic':
      return createAnthropic({ apiKey: spec.apiKey, ...baseURL })(spec.model);
    case 'google':
      return createGoogleGenerativeAI({ apiKey: spec.apiKey, ...baseURL })(spec.model);
    case 'compatible':
      return createOpenAICompatible({
        name: 'compatible',
        baseURL: spec.baseUrl ?? '',
        ...(spec.apiKey ? { apiKey: spec.apiKey } : {}),
        // Usage arrives only when asked for in a stream; a server that ignores the option still answers.
        includeUsage: true,
      }).chatModel(spec.model);
    case 'openai':
      // Chat completions, not the Responses API, because that is what compatible servers implement.
      return createOpenAI({ apiKey: spec.apiKey, ...baseURL }).chat(spec.model);
  }
}

interface Offered {
  spec: ModelSpec;
  model: LanguageModelV4;
}

/** What one source of found models offers now. */
interface Found {
  source: ModelSource;
  /** Its models by id, as its server last listed them (kept while it is down). */
  models: Map<string, Offered>;
  /** Whether its server answered the last time it was asked. */
  reachable: boolean;
}

/**
 * The models the API offers (M1): the configured ones, each built once at start (the first is the
 * default), and those found on servers that list their models (issue 42), replaced each time a
 * list is read again. A chat names its model by id; an id no longer offered is `undefined` here,
 * and its turn fails (never a silent fallback to another model).
 */
export class ModelRegistry {
  private readonly fixed: Map<string, Offered>;
  private readonly found: Found[];
  readonly defaultId: string;
  private readonly documentTokens: number;

  constructor(
    specs: ModelSpec[],
    private readonly options: {
      localModelDelayMs: number;
      wrap?: (model: LanguageModelV4, spec: ModelSpec) => LanguageModelV4;
      sources?: ModelSource[];
      /** The most tokens of documents' text one message gives a model (D1; default none). */
      documentTokens?: number;
    },
  ) {
    const [first] = specs;
    if (!first) throw new Error('no model is configured');
    this.defaultId = first.id;
    this.fixed = new Map(specs.map((spec) => [spec.id, this.build(spec)]));
    this.found = (options.sources ?? []).map((source) => ({ source, models: new Map(), reachable: false }));
    this.documentTokens = options.documentTokens ?? 0;
  }

  private build(spec: ModelSpec): Offered {
    const model = languageModelOf(spec, this.options.localModelDelayMs);
    return { spec, model: this.options.wrap ? this.options.wrap(model, spec) : model };
  }

  /** The servers whose models are found. */
  sources(): ModelSource[] {
    return this.found.map((found) => found.source);
  }

  /**
   * What `source`'s server lists now (model names), or `null` when it did not answer: its models
   * stay, shown as unavailable. A configured id wins over a found one of the same id.
   */
  offer(source: ModelSource, names: string[] | null): void {
    const found = this.found.find((candidate) => candidate.source === source);
    if (!found) return;
    found.reachable = names !== null;
    if (names === null) return;
    const next = new Map<string, Offered>();
    for (const name of names) {
      const spec = foundModelSpec(source, name);
      if (!spec || this.fixed.has(spec.id) || next.has(spec.id)) continue;
      next.set(spec.id, found.models.get(spec.id) ?? this.build(spec));
    }
    found.models = next;
  }

  /**
   * What `GET /api/models` lists, the configured models first: never a key or a URL. A configured
   * source never reached is one unavailable entry, so the picker can say it is down.
   */
  list(): ChatModel[] {
    const fixed = [...this.fixed.values()].map(({ spec }) => ({
      id: spec.id,
      label: spec.label,
      contextWindow: spec.contextWindow,
      documentTokens: this.documentTokens,
      builtIn: spec.kind === 'local',
      available: true,
    }));
    const found = this.found.flatMap(({ source, models, reachable }) => {
      if (models.size === 0)
        return source.configured && !reachable
          ? [
              {
                id: `${source.prefix}:*`,
                label: `${source.label} (not answering)`,
                contextWindow: source.contextWindow,
                documentTokens: this.documentTokens,
                builtIn: false,
                available: false,
              },
            ]
          : [];
      return [...models.values()].map(({ spec }) => ({
        id: spec.id,
        label: spec.label,
        contextWindow: spec.contextWindow,
        documentTokens: this.documentTokens,
        builtIn: false,
        available: reachable,
      }));
    });
    return [...fixed, ...found];
  }

  private entry(id: string): Offered | undefined {
    const fixed = this.fixed.get(id);
    if (fixed) return fixed;
    for (const { models } of this.found) {
      const found = models.get(id);
      if (found) return found;
    }
    return undefined;
  }

  has(id: string): boolean {
    return this.entry(id) !== undefined;
  }

  /** The model called for `id`, or undefined when it is not (or no longer) offered. */
  model(id: string): LanguageModelV4 | undefined {
    return this.entry(id)?.model;
  }

  /** The default model: calls that belong to no chat's choice (a compaction's summary). */
  defaultModel(): LanguageModelV4 {
    return this.fixed.get(this.defaultId)?.model as LanguageModelV4;
  }

  /** The context window of `id`; the default's for an id no longer offered. */
  contextWindow(id: string | null | undefined): number {
    const offered = (id ? this.entry(id) : undefined) ?? this.fixed.get(this.defaultId);
    return offered?.spec.contextWindow ?? 0;
  }

  /**
   * The encoding the context meter counts every chat in: the default model's (stored counts are
   * kept per encoding, so one for all models lets a count serve every chat; ADR-027).
   */
  encoding(): TokenEncoding {
    const spec = this.fixed.get(this.defaultId)?.spec;
    return spec ? tokenEncodingOf(spec) : encodingOfModel('local');
  }

  /** The id a chat with `choice` runs with: its own choice, or the default when it made none. */
  resolve(choice: string | null | undefined): string {
    return choice ?? this.defaultId;
  }
}

/**
 * The model a source's server listed as `name`: `<prefix>:<name>`, called through the
 * OpenAI-compatible package (Ollama at its `/v1`). A name that makes no valid id is skipped.
 */
function foundModelSpec(source: ModelSource, name: string): ModelSpec | undefined {
  const id = `${source.prefix}:${name}`;
  if (!isModelId(id)) return undefined;
  return {
    kind: 'compatible',
    id,
    label: `${name} (${source.label})`,
    contextWindow: source.contextWindow,
    model: name,
    baseUrl: source.kind === 'ollama' ? `${source.baseUrl}/v1` : source.baseUrl,
    ...(source.apiKey ? { apiKey: source.apiKey } : {}),
  };
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

/**
 * The models the API offers (M1), read once at start from `CHAT_MODELS`, or from the single-model
 * settings (`CHAT_MODEL`, `OPENAI_*`, `CHAT_CONTEXT_WINDOW`) when it is unset.
 *
 * `CHAT_MODELS` is a comma-separated list; the first entry is the default model. An entry is
 *   `local`                                  the built-in demo model (scripted replies)
 *   `openai:<model>[@<base URL>]`            OpenAI's API (key: `OPENAI_API_KEY`)
 *   `anthropic:<model>[@<base URL>]`         Anthropic's Messages API (key: `ANTHROPIC_API_KEY`)
 *   `google:<model>[@<base URL>]`            Google's Gemini API (key: `GOOGLE_GENERATIVE_AI_API_KEY`)
 *   `compatible:<model>@<base URL>`          another OpenAI-compatible server (no key unless `key=`)
 *   `compatible:*@<base URL>`                every model that server lists (`GET <base URL>/models`),
 *                                            found at start and every MODEL_LIST_REFRESH_MS (ModelSource)
 * followed by optional `;name=value` settings:
 *   `id=`     the id people and the API use (default: the entry without its base URL); for a `*`
 *             entry, the prefix of its models' ids (default: `compatible`, ids `compatible:<model>`)
 *   `label=`  what the picker shows (default: the id; for `local`, DEMO_MODEL_LABEL); for a `*`
 *             entry, named after each model's name (`qwen3 (vLLM)`; default: the prefix)
 *   `window=` the context window in tokens (default: 8000 for `local`, 128000 otherwise)
 *   `key=`    the environment variable holding the API key (default: the provider's, above)
 * e.g. `local;label=Local,openai:gpt-4.1-mini;label=GPT-4.1 mini,anthropic:claude-sonnet-4-5,compatible:qwen3@http://127.0.0.1:8000/v1;key=VLLM_KEY`.
 * A bad entry stops the API at start with a message that names it. The default is the first entry
 * that names one model; a list of `*` entries alone gets the built-in demo model as its default, so
 * a server that is down never leaves the API without a model.
 */

/** The providers a remote entry can name, each through its own AI SDK package. */
export type RemoteKind = 'openai' | 'anthropic' | 'google' | 'compatible';

export type ModelSpec =
  | { kind: 'local'; id: string; label: string; contextWindow: number }
  | {
      kind: RemoteKind;
      id: string;
      label: string;
      contextWindow: number;
      /** The model name the server is asked for. */
      model: string;
      baseUrl?: string;
      /** Absent only for a `compatible` server that takes none. */
      apiKey?: string;
    };

/**
 * A server whose models are found rather than typed (issue 42): an OpenAI-compatible server's
 * `GET <base URL>/models`, or Ollama's `GET <base URL>/api/tags` (its models then called through
 * its OpenAI-compatible `<base URL>/v1`). Each model it lists is offered as `<prefix>:<name>`.
 */
export interface ModelSource {
  kind: 'compatible' | 'ollama';
  prefix: string;
  /** Named after each model's name in the picker: `<name> (<label>)`. */
  label: string;
  baseUrl: string;
  apiKey?: string;
  contextWindow: number;
  /**
   * Named in CHAT_MODELS: while down it is listed as unavailable. An Ollama looked for because
   * nothing was configured is listed only while it answers.
   */
  configured: boolean;
}

/** The variable each provider's key is read from unless an entry's `key=` names another. */
const KEY_VARIABLES: Record<Exclude<RemoteKind, 'compatible'>, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
};

export class ModelListError extends Error {}

/**
 * What the built-in model is called unless a `label=` renames it: it writes scripted replies (no
 * AI), and a person trying the app must not take it for a real model.
 */
export const DEMO_MODEL_LABEL = 'Demo model (scripted replies)';

const LOCAL_WINDOW = 8_000;
const REMOTE_WINDOW = 128_000;
// Ollama's default context length: its OpenAI-compatible API cannot ask for more, and cuts the rest.
const OLLAMA_WINDOW = 4_096;
const MIN_WINDOW = 1_000;
const MAX_WINDOW = 10_000_000;
const ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/;

/** Whether `id` can name a model: letters, digits and . _ : / -, at most 100. */
export function isModelId(id: string): boolean {
  return ID.test(id);
}
const SETTINGS = new Set(['id', 'label', 'window', 'key']);

// OpenAI-compatible local servers (Ollama, vLLM, LM Studio) ignore the key but the client requires one.
const PLACEHOLDER_API_KEY = 'not-needed';

/**
 * The key an `openai:` model is called with: the key, else a placeholder when a base URL names a
 * compatible server; undefined when there is neither (a configuration error).
 */
export function openaiApiKey(apiKey: string | undefined, baseUrl: string | undefined): string | undefined {
  return apiKey?.trim() || (baseUrl?.trim() ? PLACEHOLDER_API_KEY : undefined);
}

/**
 * The models a configuration offers: `CHAT_MODELS` when it is set, else the one the single-model
 * settings name. The API's configuration and the eval profile both read them here.
 */
export function configuredModels(
  settings: {
    chatModels?: string | undefined;
    chatModel: string;
    openaiApiKey?: string | undefined;
    openaiBaseUrl?: string | undefined;
    contextWindow?: number | undefined;
  },
  env: Record<string, string | undefined>,
): ModelSpec[] {
  const list = settings.chatModels?.trim();
  if (list) return parseModelList(list, env);
  const { chatModel, openaiApiKey, openaiBaseUrl, contextWindow } = settings;
  return [
    singleModel({
      chatModel,
      ...(openaiApiKey !== undefined ? { openaiApiKey } : {}),
      ...(openaiBaseUrl !== undefined ? { openaiBaseUrl } : {}),
      ...(contextWindow !== undefined ? { contextWindow } : {}),
    }),
  ];
}

/** The environment variables the entries of `CHAT_MODELS` name for their keys (`key=VAR`). */
export function keyVariablesOf(value: string | undefined): string[] {
  return [...(value ?? '').matchAll(/;\s*key=([A-Za-z_][A-Za-z0-9_]*)/g)].flatMap((match) =>
    match[1] ? [match[1]] : [],
  );
}

/** Parses `CHAT_MODELS`' entries that name one model each; `*` entries are read by modelSourcesOf. */
export function parseModelList(value: string, env: Record<string, string | undefined>): ModelSpec[] {
  return parseModelEntries(value, env).models;
}

/** Parses `CHAT_MODELS`; throws ModelListError naming the first bad entry. */
export function parseModelEntries(
  value: string,
  env: Record<string, string | undefined>,
): { models: ModelSpec[]; sources: ModelSource[] } {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new ModelListError('CHAT_MODELS: lists no model');
  const models: ModelSpec[] = [];
  const sources: ModelSource[] = [];
  for (const entry of entries) {
    const parsed = parseEntry(entry, env);
    if ('configured' in parsed) {
      if (sources.some((known) => known.prefix === parsed.prefix))
        throw new ModelListError(`CHAT_MODELS entry "${entry}": the id "${parsed.prefix}" is used twice`);
      sources.push(parsed);
      continue;
    }
    if (models.some((known) => known.id === parsed.id))
      throw new ModelListError(`CHAT_MODELS entry "${entry}": the id "${parsed.id}" is used twice`);
    models.push(parsed);
  }
  if (models.length === 0) models.push(singleModel({ chatModel: 'local' }));
  return { models, sources };
}

/**
 * The servers whose models are found (issue 42): CHAT_MODELS' `*` entries; with nothing configured
 * (neither CHAT_MODELS nor a CHAT_MODEL other than `local`), an Ollama at `ollamaBaseUrl` unless
 * that is `off`.
 */
export function modelSourcesOf(
  settings: { chatModels?: string | undefined; chatModel: string; ollamaBaseUrl: string },
  env: Record<string, string | undefined>,
): ModelSource[] {
  const list = settings.chatModels?.trim();
  if (list) return parseModelEntries(list, env).sources;
  if (settings.chatModel !== 'local' || settings.ollamaBaseUrl === 'off') return [];
  return [
    {
      kind: 'ollama',
      prefix: 'ollama',
      label: 'Ollama',
      baseUrl: settings.ollamaBaseUrl.replace(/\/+$/, ''),
      contextWindow: OLLAMA_WINDOW,
      configured: false,
    },
  ];
}

function parseEntry(entry: string, env: Record<string, string | undefined>): ModelSpec | ModelSource {
  const fail = (why: string) => new ModelListError(`CHAT_MODELS entry "${entry}": ${why}`);
  const [head = '', ...rest] = entry.split(';').map((part) => part.trim());
  const settings = new Map<string, string>();
  for (const part of rest) {
    const at = part.indexOf('=');
    const name = at < 0 ? part : part.slice(0, at).trim();
    if (!SETTINGS.has(name)) throw fail(`unknown setting "${name}" (expected id, label, window or key)`);
    if (settings.has(name)) throw fail(`"${name}" is set twice`);
    const setting = part.slice(at + 1).trim();
    if (at < 0 || setting === '') throw fail(`"${name}" has no value`);
    settings.set(name, setting);
  }
  const window = settings.get('window');
  const contextWindow = window === undefined ? undefined : Number(window);
  if (
    contextWindow !== undefined &&
    (!Number.isInteger(contextWindow) || contextWindow < MIN_WINDOW || contextWindow > MAX_WINDOW)
  )
    throw fail(`window must be a whole number of tokens from ${MIN_WINDOW} to ${MAX_WINDOW}`);

  if (head === 'local') {
    if (settings.has('key')) throw fail('the local model takes no key');
    const id = idOf(settings.get('id') ?? 'local', fail);
    return {
      kind: 'local',
      id,
      label: settings.get('label') ?? DEMO_MODEL_LABEL,
      contextWindow: contextWindow ?? LOCAL_WINDOW,
    };
  }
  const colon = head.indexOf(':');
  const kind = head.slice(0, colon);
  if (colon < 0 || !isRemoteKind(kind))
    throw fail('expected "local" or "<openai|anthropic|google|compatible>:<model>[@<base URL>]"');
  const at = head.indexOf('@');
  const model = (at < 0 ? head.slice(colon + 1) : head.slice(colon + 1, at)).trim();
  if (!model) throw fail('names no model');
  const baseUrl = at < 0 ? undefined : head.slice(at + 1).trim();
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) throw fail(`"${baseUrl}" is not a URL`);
  if (model === '*' && kind !== 'compatible')
    throw fail('only a compatible: entry stands for every model of its server');
  // A `*` entry's id is the prefix of its models' ids, checked where it is read below.
  const id = model === '*' ? '' : idOf(settings.get('id') ?? `${kind}:${model}`, fail);
  const common = {
    id,
    label: settings.get('label') ?? id,
    contextWindow: contextWindow ?? REMOTE_WINDOW,
    model,
  };
  if (kind === 'compatible') {
    if (!baseUrl) throw fail('needs the base URL of its server (compatible:<model>@<base URL>)');
    const keyVariable = settings.get('key');
    const apiKey = keyVariable === undefined ? undefined : env[keyVariable]?.trim();
    if (keyVariable !== undefined && !apiKey) throw fail(`needs ${keyVariable}`);
    if (model === '*') {
      const prefix = idOf(settings.get('id') ?? 'compatible', fail);
      return {
        kind: 'compatible',
        prefix,
        label: settings.get('label') ?? prefix,
        baseUrl: baseUrl.replace(/\/+$/, ''),
        ...(apiKey ? { apiKey } : {}),
        contextWindow: contextWindow ?? REMOTE_WINDOW,
        configured: true,
      };
    }
    return { kind, ...common, baseUrl, ...(apiKey ? { apiKey } : {}) };
  }
  const keyVariable = settings.get('key') ?? KEY_VARIABLES[kind];
  // Only OpenAI's client is pointed at keyless local servers (a placeholder key); the others need one.
  const apiKey =
    kind === 'openai' ? openaiApiKey(env[keyVariable], baseUrl) : env[keyVariable]?.trim() || undefined;
  if (!apiKey)
    throw fail(
      kind === 'openai'
        ? `needs ${keyVariable} (or a base URL of an OpenAI-compatible server)`
        : `needs ${keyVariable}`,
    );
  return { kind, ...common, ...(baseUrl ? { baseUrl } : {}), apiKey };
}

const REMOTE_KINDS: readonly string[] = [
  'openai',
  'anthropic',
  'google',
  'compatible',
] satisfies RemoteKind[];

function isRemoteKind(kind: string): kind is RemoteKind {
  return REMOTE_KINDS.includes(kind);
}

function idOf(id: string, fail: (why: string) => Error): string {
  if (!ID.test(id)) throw fail(`the id "${id}" must be letters, digits and . _ : / - (at most 100)`);
  return id;
}

/** Today's single model (`CHAT_MODEL` and its settings), as the one entry of the list. */
export function singleModel(settings: {
  chatModel: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  contextWindow?: number;
}): ModelSpec {
  const { chatModel } = settings;
  if (chatModel === 'local')
    return {
      kind: 'local',
      id: 'local',
      label: DEMO_MODEL_LABEL,
      contextWindow: settings.contextWindow ?? LOCAL_WINDOW,
    };
  const model = chatModel.slice('openai:'.length).trim();
  const apiKey = openaiApiKey(settings.openaiApiKey, settings.openaiBaseUrl);
  if (!model || !apiKey)
    throw new ModelListError(`CHAT_MODEL "${chatModel}" needs a model name and OPENAI_API_KEY`);
  return {
    kind: 'openai',
    id: chatModel,
    label: chatModel,
    contextWindow: settings.contextWindow ?? REMOTE_WINDOW,
    model,
    ...(settings.openaiBaseUrl ? { baseUrl: settings.openaiBaseUrl } : {}),
    apiKey,
  };
}

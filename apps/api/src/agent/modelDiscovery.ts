import { z } from 'zod';
import type { Logger } from '../platform/logger';
import type { ModelSource } from '../platform/modelList';
import type { ModelRegistry } from './models';

/**
 * Models found, not typed (issue 42): each source's server is asked what it serves at start and
 * every `refreshMs` after, and the registry offers what it lists. A server that does not answer
 * is shown as unavailable and never fails the start.
 */

// Long enough for a busy local server, short enough that a dead address does not hold the start.
const LIST_TIMEOUT_MS = 3_000;
// A list is read into memory whole: a server that answers with more is not one we can use.
const MAX_LIST_BYTES = 1_000_000;
const MAX_MODELS = 500;

/** OpenAI's `GET /models` (vLLM, LM Studio, llama.cpp, Ollama's /v1 all answer it). */
const openAiModels = z.object({ data: z.array(z.object({ id: z.string().min(1) })) });
/** Ollama's `GET /api/tags`. */
const ollamaTags = z.object({ models: z.array(z.object({ name: z.string().min(1) })) });

/** The model names `source`'s server lists; throws when it does not answer with a list. */
export async function listModelsOf(source: ModelSource, signal?: AbortSignal): Promise<string[]> {
  const url = source.kind === 'ollama' ? `${source.baseUrl}/api/tags` : `${source.baseUrl}/models`;
  const timeout = AbortSignal.timeout(LIST_TIMEOUT_MS);
  const response = await fetch(url, {
    headers: source.apiKey ? { authorization: `Bearer ${source.apiKey}` } : {},
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    redirect: 'error',
  });
  if (!response.ok) throw new Error(`answered ${response.status}`);
  const text = await response.text();
  if (text.length > MAX_LIST_BYTES) throw new Error('answered with a list too long to read');
  const body: unknown = JSON.parse(text);
  const names =
    source.kind === 'ollama'
      ? ollamaTags.parse(body).models.map((model) => model.name)
      : openAiModels.parse(body).data.map((model) => model.id);
  return names.slice(0, MAX_MODELS);
}

export interface ModelDiscovery {
  /** Settles once every source has answered or given up, the first time. */
  ready: Promise<void>;
  stop(): void;
}

/** Reads every source of `registry` now and every `refreshMs`, until stopped. */
export function startModelDiscovery(
  registry: ModelRegistry,
  options: { refreshMs: number; logger: Logger },
): ModelDiscovery {
  const sources = registry.sources();
  const stopping = new AbortController();
  // What each source did last time, so a server going down or coming back is logged once.
  const answered = new Map<ModelSource, boolean>();

  const readOne = async (source: ModelSource) => {
    let names: string[] | null = null;
    try {
      names = await listModelsOf(source, stopping.signal);
    } catch (error) {
      if (stopping.signal.aborted) return;
      // The prefix, never the URL: a base URL may carry credentials.
      if (source.configured && answered.get(source) !== false)
        options.logger.warn(
          { models: `${source.prefix}:*`, reason: reasonOf(error) },
          'a model server did not list its models: they are shown as unavailable',
        );
    }
    if (names !== null && answered.get(source) === false)
      options.logger.info({ models: `${source.prefix}:*` }, 'a model server answers again');
    answered.set(source, names !== null);
    registry.offer(source, names);
  };
  const readAll = async () => {
    await Promise.all(sources.map(readOne));
  };

  if (sources.length === 0) return { ready: Promise.resolve(), stop: () => {} };
  const ready = readAll();
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopping.signal.aborted) return;
    timer = setTimeout(() => {
      void readAll().then(schedule);
    }, options.refreshMs);
    // Discovery never keeps the process alive on its own.
    timer.unref();
  };
  void ready.then(schedule);
  return {
    ready,
    stop: () => {
      stopping.abort();
      clearTimeout(timer);
    },
  };
}

/** Why a list was not read, in words that carry no URL or body: a socket code or the error's kind. */
function reasonOf(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'unknown';
}

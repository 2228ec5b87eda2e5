import { availableParallelism } from 'node:os';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DOCUMENT_TOKENS_PER_MESSAGE,
  DOCUMENT_TOKENS_PER_TURN,
  drainModes,
  toolModes,
  toolName,
} from '@chat/contracts';
import { z } from 'zod';
import { CHAT_RUNTIMES, DEFAULT_CHAT_RUNTIME } from './chatRuntimes';
import { mcpServerList, parseJsonSetting } from './mcpServerList';
import {
  configuredModels,
  ModelListError,
  type ModelSource,
  type ModelSpec,
  modelSourcesOf,
  openaiApiKey,
} from './modelList';
import { BURST_LOOP_DELAY_MS } from './startSlots';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

const port = z.coerce.number().int().min(0).max(65535);
const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);
/** A rate limit: requests per window; 0 turns the limit off. */
const limit = (fallback: number) => z.coerce.number().int().min(0).max(1_000_000).default(fallback);
/** A comma-separated list; blanks dropped. */
const list = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value) =>
      value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    );

const configSchema = z.object({
  API_HOST: z.string().default('127.0.0.1'),
  API_PORT: port.default(3001),
  /**
   * API processes sharing API_PORT (L2): one per core by default; `1` runs the API in this one
   * process, as before. Each is an instance under the same rules (every rule lives in PostgreSQL).
   */
  API_PROCESSES: z.preprocess(
    emptyAsUndefined,
    z.coerce
      .number()
      .int()
      .min(1)
      .max(256)
      .default(() => availableParallelism()),
  ),
  WEB_ORIGIN: z.url().default('http://localhost:3000'),
  DATABASE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  DATA_DIR: z.string().default(`${repoRoot}.data`),
  EMBEDDED_PG_PORT: z.preprocess(emptyAsUndefined, port.optional()),
  CHAT_MODEL: z
    .string()
    .regex(/^(local|openai:.+)$/, 'must be "local" or "openai:<model>"')
    .default('local'),
  /**
   * Several models (M1), the first the default; the entry format is in `modelList.ts` and the
   * README. Unset: `CHAT_MODEL` (with `OPENAI_*` and `CHAT_CONTEXT_WINDOW`) is the one model.
   */
  CHAT_MODELS: z.preprocess(emptyAsUndefined, z.string().optional()),
  OPENAI_API_KEY: z.preprocess(emptyAsUndefined, z.string().optional()),
  OPENAI_BASE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  /** Keys of `anthropic:` and `google:` entries of CHAT_MODELS (an entry's `key=` may name another). */
  ANTHROPIC_API_KEY: z.preprocess(emptyAsUndefined, z.string().optional()),
  GOOGLE_GENERATIVE_AI_API_KEY: z.preprocess(emptyAsUndefined, z.string().optional()),
  /**
   * Where an Ollama is looked for when no model is configured (its models are offered beside the
   * built-in one while it answers); `off` does not look.
   */
  OLLAMA_BASE_URL: z.preprocess(
    emptyAsUndefined,
    z.union([z.literal('off'), z.url()]).default('http://127.0.0.1:11434'),
  ),
  /** How often the lists of servers whose models are found (`compatible:*@…`, Ollama) are read again. */
  MODEL_LIST_REFRESH_MS: z.coerce.number().int().min(100).max(86_400_000).default(300_000),
  /**
   * The runtime driver every turn of this deployment runs through: `ai-sdk` (the default,
   * ADR-045), one AI SDK `streamText` request per run; `mastra`, the Mastra agent. Both write the
   * same transcript, so a chat goes on after a switch (a tool call waiting for approval resumes
   * only on the driver it suspended on when that is `mastra`).
   */
  CHAT_RUNTIME: z.preprocess(emptyAsUndefined, z.enum(CHAT_RUNTIMES).default(DEFAULT_CHAT_RUNTIME)),
  /**
   * A1: the server directories agent chats may work in, absolute, comma-separated. Unset: agent
   * chats are off (nothing of them shows, nothing starts). The agent runs with this server's own
   * user rights in them (README).
   */
  AGENT_WORKSPACES: list('').pipe(
    z.array(z.string().refine((path) => isAbsolute(path), 'each workspace must be an absolute path')),
  ),
  /** Whether guest accounts may create agent chats (A1); by default only signed-up accounts. */
  AGENT_GUESTS: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).default('false'))
    .transform((value) => value === 'true'),
  /** The model the Claude Code agent is asked for; unset: the agent's own default. */
  AGENT_MODEL: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** The Anthropic Messages API the agent talks to (unset: Anthropic's own), and its key (unset: ANTHROPIC_API_KEY). */
  AGENT_BASE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  AGENT_API_KEY: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** A2: how long an agent chat's session stays after a turn, for its next message (ms). */
  AGENT_IDLE_MS: z.coerce.number().int().min(0).max(86_400_000).default(120_000),
  /** A2: most agent sessions running at once per API instance; past it the least recently used idle one is parked. */
  AGENT_SESSIONS: z.coerce.number().int().min(1).max(1_000).default(4),
  LOCAL_MODEL_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(30),
  /**
   * The model's context window in tokens (C2). Unset: 8,000 for the local model (small, so long
   * chats reach it in tests), 128,000 for `openai:<model>`.
   */
  CHAT_CONTEXT_WINDOW: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1_000).max(10_000_000).optional(),
  ),
  /**
   * C3: the fraction of the window past which a turn first summarizes the older messages; 0 turns
   * compaction off (the model then gets the newest messages that fit, and the transcript says so).
   */
  CONTEXT_COMPACT_AT: z.coerce
    .number()
    .refine((value) => value === 0 || (value >= 0.5 && value <= 0.95), 'must be 0 (off) or from 0.5 to 0.95')
    .default(0.8),
  BETTER_AUTH_SECRET: z.preprocess(emptyAsUndefined, z.string().min(32).optional()),
  /** `false`: no guest accounts; people sign up or sign in first. */
  AUTH_ALLOW_GUESTS: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).default('true'))
    .transform((value) => value === 'true'),
  /** `false`: no new accounts (`403 sign_up_disabled`); existing accounts still sign in. */
  AUTH_ALLOW_SIGNUP: z
    .preprocess(emptyAsUndefined, z.enum(['true', 'false']).default('true'))
    .transform((value) => value === 'true'),
  /**
   * With guests off, a guest from before that has not visited for this many days has its data
   * (chats, share links, uploads) removed.
   */
  GUEST_GRACE_DAYS: z.coerce.number().min(0).max(3650).default(30),
  /**
   * Who runs the queue of a new chat (Q15): `viewer`, an open page (Q10); `background`, the
   * server, with no page open. Each chat can change its own choice.
   */
  QUEUE_DRAIN: z.preprocess(emptyAsUndefined, z.enum(drainModes).default('viewer')),
  /**
   * T1: each tool's mode in a chat whose owner never changed it, as JSON (`{"save_note":"allow"}`),
   * over the built-in defaults (`current_time` allow, `save_note` ask).
   */
  TOOL_DEFAULTS: z.preprocess(
    (value) => {
      if (value === undefined || value === '') return {};
      try {
        return JSON.parse(String(value));
      } catch {
        return value;
      }
    },
    z.record(toolName, z.enum(toolModes)),
  ),
  /**
   * T3: MCP servers whose tools join the built-in ones, as a JSON list (the format is in
   * `mcpServerList.ts` and the README). Unset: none.
   */
  MCP_SERVERS: z.preprocess(parseJsonSetting, mcpServerList.default([])),
  TURN_LEASE_MS: z.coerce.number().int().min(500).max(600_000).default(15_000),
  /**
   * A run that sends nothing at all (no text, no tool step) for this long is stopped as failed, so
   * a run that hangs cannot hold its thread (and renew its lease) forever.
   */
  TURN_IDLE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(300_000),
  /**
   * F1: how long a settle that keeps failing for a reason other than a database outage is tried
   * again (from its first such failure) before its turn ends `failed`. An outage is waited out.
   */
  SETTLE_GIVE_UP_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** Origins allowed to send unsafe requests besides WEB_ORIGIN and its loopback twin. */
  TRUSTED_ORIGINS: list('').pipe(z.array(z.url().transform((value) => new URL(value).origin))),
  /** Peers whose X-Forwarded-For is believed (the web app's proxy on this machine by default). */
  TRUSTED_PROXIES: list('127.0.0.1,::1'),
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(100).max(86_400_000).default(60_000),
  RATE_LIMIT_GUESTS_PER_IP: limit(10),
  RATE_LIMIT_SIGN_INS_PER_IP: limit(20),
  /** Failed password sign-ins per email and address (and failed password changes per account). */
  RATE_LIMIT_FAILED_SIGN_INS: limit(5),
  /** Failed sign-ins per email from all addresses; past it, an address that failed gets no more tries. */
  RATE_LIMIT_FAILED_SIGN_INS_PER_EMAIL: limit(50),
  RATE_LIMIT_THREADS_PER_ACCOUNT: limit(30),
  RATE_LIMIT_SENDS_PER_ACCOUNT: limit(60),
  RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: limit(10),
  /**
   * Sends (and edits, regenerates) handled at once by this instance, how many more may wait, and
   * for how long; past that a send is answered `503 overloaded` at once (platform/startSlots.ts).
   */
  SENDS_AT_ONCE: z.coerce.number().int().min(1).max(10_000).default(16),
  SENDS_WAITING: z.coerce.number().int().min(0).max(100_000).default(32),
  SEND_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(250),
  /**
   * How far behind (ms) this process's event loop may be before a send is answered `503
   * overloaded` at once, every start slot free or not (platform/loopDelay.ts); `0` turns it off.
   * The second, lower bound holds while other sends are starting or waiting (a burst): about how
   * late the replies already streaming may be made by taking on more (`BURST_LOOP_DELAY_MS`).
   */
  SEND_LOOP_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(300),
  SEND_LOOP_DELAY_BESIDE_SENDS_MS: z.coerce.number().int().min(0).max(60_000).default(BURST_LOOP_DELAY_MS),
  /**
   * How much memory (MB, by estimate) this process may keep of converted transcripts for thread
   * detail (ADR-051, chats/detail/transcriptCache.ts); `0` turns the cache off.
   */
  DETAIL_CACHE_MB: z.coerce.number().min(0).max(65_536).default(64),
  /** Where image bytes are stored: `postgres` (the only storage so far; the interface allows others). */
  ATTACHMENT_STORAGE: z.enum(['postgres']).default('postgres'),
  /** How many of the most recent messages with images the model gets the bytes of; older ones become a note. */
  ATTACHMENT_CONTEXT_MESSAGES: z.coerce.number().int().min(0).max(100).default(10),
  /**
   * How many tokens of documents' text the model gets (D1): all documents of one message, and of
   * one call (newest messages first); past them the text is cut with a note saying what was read.
   */
  DOCUMENT_TOKENS_PER_MESSAGE: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000_000)
    .default(DOCUMENT_TOKENS_PER_MESSAGE),
  DOCUMENT_TOKENS_PER_TURN: z.coerce.number().int().min(0).max(10_000_000).default(DOCUMENT_TOKENS_PER_TURN),
  /**
   * How long (wall clock and CPU) and how much memory reading one document's text may take before it
   * is refused; the kernel enforces both on the reading process (chats/attachments/documentText.ts).
   */
  PDF_READ_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  DOCUMENT_READ_MEMORY_MB: z.coerce.number().int().min(64).max(16_384).default(512),
  /** Documents read at once (per API instance, one per account at a time); more wait their turn. */
  DOCUMENT_READS_AT_ONCE: z.coerce.number().int().min(1).max(256).default(2),
  /** Reading time all the documents of one import may take together; past it the import is refused. */
  IMPORT_READ_SECONDS: z.coerce.number().int().min(1).max(3_600).default(60),
  /** Image uploads read at once per account, and in all (per API instance); more wait their turn. */
  UPLOADS_AT_ONCE_PER_ACCOUNT: z.coerce.number().int().min(1).max(100).default(2),
  UPLOADS_AT_ONCE: z.coerce.number().int().min(1).max(1000).default(4),
  /** Uploads never sent are removed after this many hours. */
  ATTACHMENT_UNSENT_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 365)
    .default(24),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Every variable the API reads (`.env.example` lists each; test/envExample.test.ts checks it). */
export const configVariables: readonly string[] = Object.keys(configSchema.shape);

export type Config = z.infer<typeof configSchema> & {
  /** The models offered (M1), the default first: `CHAT_MODELS`, or `CHAT_MODEL` alone. */
  models: ModelSpec[];
  /** Servers whose models are found at start and every MODEL_LIST_REFRESH_MS (issue 42). */
  modelSources: ModelSource[];
};

export class ConfigError extends Error {}

/** Reads the environment once at start; a bad value stops the process with a message naming it. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const { CHAT_MODEL, CHAT_MODELS, OPENAI_API_KEY, OPENAI_BASE_URL, CHAT_CONTEXT_WINDOW } = parsed.data;
  if (!CHAT_MODELS && CHAT_MODEL.startsWith('openai:') && !openaiApiKey(OPENAI_API_KEY, OPENAI_BASE_URL)) {
    throw new ConfigError(
      'Invalid configuration:\n  OPENAI_API_KEY: required when CHAT_MODEL is openai:<model>',
    );
  }
  try {
    const models = configuredModels(
      {
        chatModels: CHAT_MODELS,
        chatModel: CHAT_MODEL,
        openaiApiKey: OPENAI_API_KEY,
        openaiBaseUrl: OPENAI_BASE_URL,
        contextWindow: CHAT_CONTEXT_WINDOW,
      },
      env,
    );
    const modelSources = modelSourcesOf(
      { chatModels: CHAT_MODELS, chatModel: CHAT_MODEL, ollamaBaseUrl: parsed.data.OLLAMA_BASE_URL },
      env,
    );
    return { ...parsed.data, models, modelSources };
  } catch (error) {
    if (error instanceof ModelListError) throw new ConfigError(`Invalid configuration:\n  ${error.message}`);
    throw error;
  }
}

/**
 * The origins whose pages may send unsafe requests (and better-auth's trusted origins): WEB_ORIGIN,
 * its loopback twin (`localhost` and `127.0.0.1` name the same local server: people type either),
 * and TRUSTED_ORIGINS.
 */
export function trustedOrigins(config: Pick<Config, 'WEB_ORIGIN' | 'TRUSTED_ORIGINS'>): string[] {
  const web = new URL(config.WEB_ORIGIN);
  const origins = [web.origin];
  const twin = ({ localhost: '127.0.0.1', '127.0.0.1': 'localhost' } as Record<string, string>)[web.hostname];
  if (twin) {
    const other = new URL(web.origin);
    other.hostname = twin;
    origins.push(other.origin);
  }
  return [...new Set([...origins, ...config.TRUSTED_ORIGINS])];
}

import type { H3 } from 'h3';
import { HANDOFF_INSTRUCTION } from '../src/agent/handoffInstruction';
import { createApp } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { keyVariablesOf } from '../src/platform/modelList';
import { createRuntime, type Runtime } from '../src/runtime';
import { ModelRecorder } from './recordingModel';

/**
 * Ways to break the handoff on purpose, so a test can show the profile fails. They exist only in
 * this harness: the API has no such switch.
 * - `skip-handoff`: the claimed turn runs without the hidden instruction.
 * - `leak-into-memory`: the instruction is sent inside the user message instead of as a system
 *   instruction, so it is stored in memory and shown to the person.
 * - `handoff-on-every-turn`: every turn gets the instruction, the next ordinary one included.
 */
export const sabotages = ['skip-handoff', 'leak-into-memory', 'handoff-on-every-turn'] as const;
export type Sabotage = (typeof sabotages)[number];

/** The API's runtime as the profile drives it, with its model calls recorded. */
export interface EvalEnvironment {
  runtime: Runtime;
  /** The HTTP app on the same services, for the routes that have no service call of their own. */
  app: H3;
  recorder: ModelRecorder;
  /** A signed-in guest who owns every thread of the run. */
  ownerId: string;
  cookie: string;
  /** The built-in local model, whose replies the deterministic scorers can read. */
  localModel: boolean;
  /** Headers every request of the profile carries, as the web app's would (the API refuses writes from other origins). */
  headers: Record<string, string>;
  /** The API has shares (PRODUCT H1), so the share-snapshot check runs. */
  sharesBuilt: boolean;
  close(): Promise<void>;
}

export interface EnvironmentOptions {
  databaseUrl: string;
  /**
   * CHAT_MODELS (and the key variables its entries name), CHAT_MODEL, CHAT_RUNTIME, OPENAI_API_KEY,
   * OPENAI_BASE_URL, ANTHROPIC_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, LOG_LEVEL are taken from here.
   */
  env?: Record<string, string | undefined>;
  sabotage?: Sabotage;
}

export async function startEvalEnvironment(options: EnvironmentOptions): Promise<EvalEnvironment> {
  const env = options.env ?? {};
  const config = loadConfig({
    // An entry of CHAT_MODELS may name any variable for its key (`key=VAR`).
    ...Object.fromEntries(keyVariablesOf(env.CHAT_MODELS).map((name) => [name, env[name]])),
    DATABASE_URL: options.databaseUrl,
    CHAT_MODELS: env.CHAT_MODELS,
    CHAT_MODEL: env.CHAT_MODEL,
    OPENAI_API_KEY: env.OPENAI_API_KEY,
    OPENAI_BASE_URL: env.OPENAI_BASE_URL,
    ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
    GOOGLE_GENERATIVE_AI_API_KEY: env.GOOGLE_GENERATIVE_AI_API_KEY,
    // The deployment's driver (`CHAT_RUNTIME`, else the default); a sabotage breaks the handoff
    // inside the Mastra agent's `stream` (see `sabotage`), so a sabotaged run is on `mastra`.
    CHAT_RUNTIME: options.sabotage ? 'mastra' : env.CHAT_RUNTIME,
    // The cases run with the models named here, never ones found on this machine.
    OLLAMA_BASE_URL: 'off',
    LOG_LEVEL: env.LOG_LEVEL ?? 'silent',
    LOCAL_MODEL_DELAY_MS: '1',
    BETTER_AUTH_SECRET: 'eval-secret-eval-secret-eval-secret-0123',
    // One guest runs every case: per-client limits would cut the profile short.
    RATE_LIMIT_GUESTS_PER_IP: '0',
    RATE_LIMIT_SIGN_INS_PER_IP: '0',
    RATE_LIMIT_FAILED_SIGN_INS: '0',
    RATE_LIMIT_FAILED_SIGN_INS_PER_EMAIL: '0',
    RATE_LIMIT_THREADS_PER_ACCOUNT: '0',
    RATE_LIMIT_SENDS_PER_ACCOUNT: '0',
    RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '0',
  });
  const recorder = new ModelRecorder();
  const runtime = await createRuntime(config, createLogger(config.LOG_LEVEL), {
    wrapModel: (model) => recorder.wrap(model),
  });
  try {
    if (options.sabotage) sabotage(runtime, options.sabotage);
    const app = createApp(runtime.services);
    const origin = config.WEB_ORIGIN;
    const { ownerId, cookie } = await signInGuest(app, origin);
    return {
      runtime,
      app,
      recorder,
      ownerId,
      cookie,
      headers: { cookie, origin },
      localModel: config.models[0]?.kind === 'local',
      sharesBuilt: 'shares' in runtime.services,
      close: () => runtime.close(),
    };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

async function signInGuest(app: H3, origin: string): Promise<{ ownerId: string; cookie: string }> {
  const response = await app.request('/api/auth/sign-in/anonymous', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: '{}',
  });
  const body = (await response.json()) as { user?: { id?: string } };
  const ownerId = body.user?.id;
  if (response.status !== 200 || !ownerId) throw new Error(`guest sign-in failed: ${response.status}`);
  const cookie = response.headers
    .getSetCookie()
    .map((value) => value.split(';')[0])
    .join('; ');
  return { ownerId, cookie };
}

type StreamMessages = Array<{ id: string; role: 'user'; parts: Array<{ type: 'text'; text: string }> }>;
type StreamOptions = { system?: string; [key: string]: unknown };

/**
 * Replaces this runtime's `agent.stream` with one that breaks the handoff the given way. The turn
 * runner calls `chatAgent.agent.stream(messages, options)`, so this is where the claim's decision
 * reaches the model.
 */
function sabotage(runtime: Runtime, kind: Sabotage): void {
  const { agent } = runtime.chatAgent;
  const original = agent.stream.bind(agent) as unknown as (m: StreamMessages, o: StreamOptions) => unknown;
  const broken = (messages: StreamMessages, options: StreamOptions) => {
    const { system, ...rest } = options;
    if (kind === 'handoff-on-every-turn') return original(messages, { ...rest, system: HANDOFF_INSTRUCTION });
    if (!system) return original(messages, options);
    if (kind === 'skip-handoff') return original(messages, rest);
    const leaked = messages.map((message) => ({
      ...message,
      parts: [...message.parts, { type: 'text' as const, text: `\n\n${system}` }],
    }));
    return original(leaked, rest);
  };
  agent.stream = broken as unknown as typeof agent.stream;
}

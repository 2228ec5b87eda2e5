import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import {
  MAX_DOCUMENT_PAGES,
  MAX_DOCUMENT_TEXT_CHARS,
  MAX_DOCX_PARTS,
  MAX_DOCX_UNPACKED_BYTES,
  turnErrorMessages,
} from '@chat/contracts';
import { connect, createSql, type Database, type DatabaseHandle, withStartupLock } from '@chat/db';
import { AccountService } from './accounts/accountService';
import { startGuestSweeper } from './accounts/guestSweep';
import { startModelDiscovery } from './agent/modelDiscovery';
import { ModelRegistry, tokenEncodingOf } from './agent/models';
import { countPromptMessage, countTextTokens } from './agent/tokenCount';
import { AgentWorkspaces } from './agent/workspaces';
import { type Auth, createAuth } from './auth/auth';
import { createAuthHandler } from './auth/authHandler';
import { SessionCache } from './auth/sessionCache';
import { AttachmentService } from './chats/attachmentService';
import { DocumentReader } from './chats/attachments/documentText';
import { withAttachmentContext } from './chats/attachments/modelContext';
import { describeAttachments } from './chats/attachments/repository';
import { postgresAttachmentStorage } from './chats/attachments/storage';
import { startAttachmentSweeper } from './chats/attachments/sweep';
import { BranchService } from './chats/branchService';
import { ContextService } from './chats/contextService';
import { TranscriptCache } from './chats/detail/transcriptCache';
import { FeedbackService } from './chats/feedbackService';
import { PortabilityService } from './chats/portabilityService';
import { SettingsService } from './chats/settingsService';
import { ShareService } from './chats/shareService';
import { ThreadEvents } from './chats/threadEvents';
import { ThreadService } from './chats/threadService';
import { insertNoteForMemoryThread } from './chats/threads/notes';
import { claimWorkspace, readToolModes } from './chats/threads/repository';
import { MastraTranscriptStore } from './chats/transcript/mastra/mastraTranscript';
import type { TranscriptStore } from './chats/transcript/transcriptStore';
import { TurnAcceptance } from './chats/turns/accepting/turnAcceptance';
import { ApprovalService } from './chats/turns/approval/approvalService';
import { endWithApprovalRequest } from './chats/turns/approval/suspend';
import { HeadClaims } from './chats/turns/claim/headClaim';
import { ContextWindows } from './chats/turns/context/window';
import { startBackgroundDrain } from './chats/turns/drain/backgroundDrain';
import { agentChatsOff, driverFor, withAgentChats } from './chats/turns/driver/choice';
import { ClaudeCodeDriver } from './chats/turns/driver/claudeCode/claudeCodeDriver';
import { type ChatAgent, createChatAgent } from './chats/turns/driver/mastra/chatAgent';
import type { RuntimeDriver } from './chats/turns/driver/types';
import { InterruptService } from './chats/turns/interrupt/interruptService';
import { QueueService } from './chats/turns/queue/queueService';
import { TurnRunner } from './chats/turns/running/runner';
import { startOrphanSweeper } from './chats/turns/settle/recovery';
import { TurnStreams } from './chats/turns/stream/attach';
import { type Config, trustedOrigins } from './platform/config';
import { DatabaseCircuit } from './platform/databaseCircuit';
import { WordedFailure } from './platform/errors';
import type { Logger } from './platform/logger';
import { LoopDelay } from './platform/loopDelay';
import { Signals } from './platform/notifications';
import { RateLimiter } from './platform/rateLimit';
import { databaseReadiness } from './platform/readiness';
import { StartSlots } from './platform/startSlots';
import { UPLOAD_LINE, UploadSlots } from './platform/uploadSlots';
import { withinMs } from './platform/withinMs';
import { authSecret, embeddedPostgresLog } from './processLifecycle';
import type { ApiServices } from './routes/services';

export interface Runtime {
  services: ApiServices;
  database: DatabaseHandle;
  chatAgent: ChatAgent;
  /** Where every branch's messages are kept (chats/transcript/). */
  transcript: TranscriptStore;
  runnerId: string;
  /**
   * Interrupts this instance's turns, then closes everything it opened. With a `deadline` (epoch
   * ms) each step gets at most the time left (and no step more than its own bound), so a step that
   * hangs on a broken connection cannot hold the rest.
   */
  close(deadline?: number): Promise<void>;
}

export interface RuntimeOptions {
  /**
   * Wraps the configured model, e.g. with a middleware that records each call (the
   * chat-queue-interrupt-ci eval profile in `evals/`). The API itself passes nothing.
   */
  wrapModel?: (model: LanguageModelV4) => LanguageModelV4;
  /**
   * The runtime driver turns run through (default: the one `CHAT_RUNTIME` names, `driverFor`);
   * tests swap in others, or wrap a real one.
   */
  driver?: (chatAgent: ChatAgent, db: Database) => RuntimeDriver | Promise<RuntimeDriver>;
}

/** Wires the API's parts together from the validated config. */
export async function createRuntime(
  config: Config,
  logger: Logger,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const database = await connect({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    embeddedPort: config.EMBEDDED_PG_PORT,
    onLog: embeddedPostgresLog(logger),
    onHang: (dropped) =>
      logger.warn({ dropped }, 'database did not answer: its waiting connections were cut'),
  });
  const { db } = database;
  const storage = postgresAttachmentStorage(db);
  // Every configured model (M1) gets image bytes and documents' text resolved from memory's
  // references just before each call; a document's budget is counted in that model's tokens and
  // capped by what that model's window leaves (D1), so a queued message gets the budget of the
  // model it runs on.
  const models = new ModelRegistry(config.models, {
    localModelDelayMs: config.LOCAL_MODEL_DELAY_MS,
    sources: config.modelSources,
    documentTokens: Math.min(config.DOCUMENT_TOKENS_PER_MESSAGE, config.DOCUMENT_TOKENS_PER_TURN),
    wrap: (model, spec) =>
      withAttachmentContext(options.wrapModel ? options.wrapModel(model) : model, {
        window: config.ATTACHMENT_CONTEXT_MESSAGES,
        describe: (ids) => describeAttachments(db, ids),
        bytes: (ids) => storage.getMany(ids),
        readText: (id, from, chars) => storage.readTextSlice(id, from, chars),
        recordReads: (reads) => storage.recordReads(reads),
        documentBudget: {
          perMessage: config.DOCUMENT_TOKENS_PER_MESSAGE,
          perTurn: config.DOCUMENT_TOKENS_PER_TURN,
          window: spec.contextWindow,
          countTokens: (text) => countTextTokens(text, tokenEncodingOf(spec)),
          countPrompt: (prompt) =>
            prompt.reduce((sum, message) => sum + countPromptMessage(message, tokenEncodingOf(spec)), 0),
        },
      }),
  });
  // Servers that list their models are read while the rest starts; a dead one costs its timeout.
  const discovery = startModelDiscovery(models, { refreshMs: config.MODEL_LIST_REFRESH_MS, logger });
  const chatAgent = await createChatAgent({
    databaseUrl: database.url,
    hangWatch: database.watch,
    models,
    startupLock: (work) => withStartupLock(database.sql, work),
    toolDefaults: config.TOOL_DEFAULTS,
    mcpServers: config.MCP_SERVERS,
    logger,
    tools: {
      // The note and its announcement commit together: open tabs read the detail again and show
      // it (a settle event carries the turn's messages, not the thread's notes).
      saveNote: ({ memoryThreadId, text }) =>
        db.transaction(async (tx) => {
          const saved = await insertNoteForMemoryThread(tx, memoryThreadId, text);
          if (saved) await signals.publishWith(tx, { kind: 'hitl.changed', threadId: saved.threadId });
          return saved?.note ?? null;
        }),
    },
  });
  const circuit = new DatabaseCircuit({ probe: () => database.sql`select 1`, logger });
  const loopDelay = new LoopDelay();
  const signals = new Signals(database.sql, () => createSql(database.url, { max: 1 }), logger, {
    onCheckFailed: (error) => circuit.recordFailure(error),
  });
  await signals.start();
  const runnerId = `api-${process.pid}-${randomBytes(4).toString('hex')}`;
  const leaseMs = config.TURN_LEASE_MS;
  const chatDriver = await (options.driver?.(chatAgent, db) ?? driverFor(config.CHAT_RUNTIME, chatAgent, db));
  // A1: agent chats only when workspaces are configured; otherwise nothing of them starts.
  const workspaces = await AgentWorkspaces.from(config.AGENT_WORKSPACES);
  if (config.AGENT_WORKSPACES.length > workspaces.list().length) {
    logger.warn(
      { configured: config.AGENT_WORKSPACES.length, found: workspaces.list().length },
      'some AGENT_WORKSPACES are not directories; they are left out',
    );
  }
  const driver = withAgentChats(
    chatDriver,
    workspaces.enabled
      ? new ClaudeCodeDriver({
          configDir: join(config.DATA_DIR, 'claude-code'),
          workspaceOf: async (turn) => {
            const checked = turn.workspace
              ? await workspaces.check(turn.workspace.id, turn.workspace.path).catch(() => undefined)
              : undefined;
            if (!checked || !turn.workspace) throw new WordedFailure(turnErrorMessages.agentWorkspaceGone);
            // Still this account's (a chat made before workspaces were kept to one account may not be).
            const owner = await claimWorkspace(db, turn.workspace.id, turn.conversation.ownerId);
            if (owner !== turn.conversation.ownerId)
              throw new WordedFailure(turnErrorMessages.agentWorkspaceTaken);
            return checked;
          },
          ...(config.AGENT_MODEL ? { model: config.AGENT_MODEL } : {}),
          ...(config.AGENT_BASE_URL ? { baseUrl: config.AGENT_BASE_URL } : {}),
          ...((config.AGENT_API_KEY ?? config.ANTHROPIC_API_KEY)
            ? { apiKey: config.AGENT_API_KEY ?? config.ANTHROPIC_API_KEY }
            : {}),
          hasModel: (id) => models.has(id),
          idleMs: config.AGENT_IDLE_MS,
          maxSessions: config.AGENT_SESSIONS,
          logger,
        })
      : agentChatsOff,
  );
  // The one transcript store, on the memory the Mastra agent writes through too.
  const transcript: TranscriptStore = new MastraTranscriptStore(chatAgent.memory, db);
  const windows = new ContextWindows({
    encoding: models.encoding(),
    window: models.contextWindow(null),
    windowOf: (id) => models.contextWindow(id),
    compactAt: config.CONTEXT_COMPACT_AT === 0 ? null : config.CONTEXT_COMPACT_AT,
  });
  const runner = new TurnRunner({
    db,
    transcript,
    windows,
    driver,
    // A run that stopped on a tool call is the approval lifecycle's until a person decides.
    suspend: (turn, reply, call, approvalRequest, stream) =>
      endWithApprovalRequest({ db, signals, logger, runnerId }, turn, reply, call, approvalRequest, stream),
    signals,
    logger,
    runnerId,
    leaseMs,
    idleMs: config.TURN_IDLE_MS,
    settleGiveUpMs: config.SETTLE_GIVE_UP_MS,
    modelName: models.defaultId,
    // A5: an agent chat's run gets only what its owner changed; the agent's own rules do the rest.
    toolModes: async (threadId, read) => {
      const { modes, agentChat } = read ?? (await readToolModes(db, threadId));
      return agentChat ? modes : chatAgent.tools.modes(modes);
    },
    maxRunningTurnsPerAccount: config.RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT,
  });
  const acceptance = new TurnAcceptance({ db, signals, runner });
  const claims = new HeadClaims({ db, signals, runner, logger });
  const queue = new QueueService({ db, signals });
  // Recovery never takes a turn this instance's runner still holds.
  const holds = (turnId: string) => runner.holds(turnId);
  const interrupts = new InterruptService({
    db,
    transcript,
    signals,
    logger,
    runner,
    claims,
    driver,
    queue,
    holds,
  });
  const allowGuests = config.AUTH_ALLOW_GUESTS;
  // The account service moves a guest's chats when better-auth links the guest to an account.
  let auth: Auth | undefined;
  const sessions = new SessionCache(signals);
  const accounts = new AccountService({
    sessions,
    db,
    auth: () => auth as Auth,
    interrupts,
    signals,
    logger,
    allowGuests,
    allowSignUp: config.AUTH_ALLOW_SIGNUP,
  });
  const newChatDrainMode = config.QUEUE_DRAIN;
  // How a document's text is read: at an upload, and again for an imported chat's documents (D1),
  // out of process under the OS's limits, a few at a time and fairly between accounts.
  const reader = new DocumentReader(
    {
      timeoutMs: config.PDF_READ_TIMEOUT_MS,
      memoryMb: config.DOCUMENT_READ_MEMORY_MB,
      maxPages: MAX_DOCUMENT_PAGES,
      maxChars: MAX_DOCUMENT_TEXT_CHARS,
      maxDocxParts: MAX_DOCX_PARTS,
      maxDocxUnpackedBytes: MAX_DOCX_UNPACKED_BYTES,
    },
    new UploadSlots({
      perAccount: 1,
      total: config.DOCUMENT_READS_AT_ONCE,
      ...UPLOAD_LINE,
    }),
  );
  const approvals = new ApprovalService({ db, signals, runner, logger });
  const threads = new ThreadService({
    db,
    tools: chatAgent.tools,
    transcript,
    signals,
    interrupts,
    logger,
    newChatDrainMode,
    windows,
    models,
    approvals,
    ...(workspaces.enabled ? { agents: { workspaces, allowGuests: config.AGENT_GUESTS } } : {}),
    transcriptCache: new TranscriptCache(Math.round(config.DETAIL_CACHE_MB * 1024 * 1024)),
  });
  const origins = trustedOrigins(config);
  auth = createAuth({
    db,
    secret: authSecret(config),
    webOrigin: config.WEB_ORIGIN,
    trustedOrigins: origins,
    logger,
    onGuestLinked: (link) => accounts.linkGuest(link),
    onError: (error) => circuit.recordFailure(error),
  });
  const limits = new RateLimiter(db, {
    windowMs: config.RATE_LIMIT_WINDOW_MS,
    limits: {
      guests: config.RATE_LIMIT_GUESTS_PER_IP,
      signIns: config.RATE_LIMIT_SIGN_INS_PER_IP,
      failedSignIns: config.RATE_LIMIT_FAILED_SIGN_INS,
      failedSignInsPerEmail: config.RATE_LIMIT_FAILED_SIGN_INS_PER_EMAIL,
      threads: config.RATE_LIMIT_THREADS_PER_ACCOUNT,
      sends: config.RATE_LIMIT_SENDS_PER_ACCOUNT,
    },
  });
  const streams = new TurnStreams({ db, runner, transcript, signals, logger });
  const services: ApiServices = {
    authRequests: createAuthHandler(auth, {
      allowGuests,
      allowSignUp: config.AUTH_ALLOW_SIGNUP,
      limits,
      trustedProxies: new Set(config.TRUSTED_PROXIES),
      database: circuit,
      sessions,
    }),
    accounts,
    logger,
    http: {
      trustedOrigins: origins,
      trustedProxies: new Set(config.TRUSTED_PROXIES),
      limits,
      database: circuit,
      uploads: new UploadSlots({
        perAccount: config.UPLOADS_AT_ONCE_PER_ACCOUNT,
        total: config.UPLOADS_AT_ONCE,
        ...UPLOAD_LINE,
      }),
      starts: new StartSlots(
        {
          atOnce: config.SENDS_AT_ONCE,
          maxWaiting: config.SENDS_WAITING,
          maxWaitMs: config.SEND_WAIT_MS,
          maxLoopDelayMs: config.SEND_LOOP_DELAY_MS,
          maxLoopDelayBesideSendsMs: config.SEND_LOOP_DELAY_BESIDE_SENDS_MS,
        },
        loopDelay,
      ),
    },
    ready: databaseReadiness(database.sql, circuit),
    threads,
    context: new ContextService({ db, driver, windows, signals, logger }),
    events: new ThreadEvents({ db, signals, logger, windows }),
    acceptance,
    queue,
    claims,
    interrupts,
    streams,
    approvals,
    branches: new BranchService({ db, transcript, signals, acceptance, models }),
    shares: new ShareService({ db, allowGuests, threads, webOrigin: config.WEB_ORIGIN }),
    feedback: new FeedbackService({ db, transcript, signals }),
    attachments: new AttachmentService({ db, allowGuests, storage, reader }),
    portability: new PortabilityService({
      db,
      allowGuests,
      storage,
      newChatDrainMode,
      reader,
      importReadMs: config.IMPORT_READ_SECONDS * 1000,
      claims,
    }),
    settings: new SettingsService({ db, models }),
  };
  const stopLimitSweeper = limits.startSweeping(Math.max(60_000, config.RATE_LIMIT_WINDOW_MS), logger);
  const stopSweeper = startOrphanSweeper(
    { db, transcript, signals, logger, holds },
    { intervalMs: Math.max(250, leaseMs / 2), graceMs: leaseMs, giveUpMs: config.SETTLE_GIVE_UP_MS },
  );
  // Q15: chats whose queue runs with no page open; stopped before the runner, so a shutting-down
  // instance starts nothing new.
  const stopDrain = startBackgroundDrain(
    { db, signals, logger, claims },
    { intervalMs: Math.max(1_000, leaseMs / 2) },
  );
  const guestIdleMs = config.GUEST_GRACE_DAYS * 86_400_000;
  const stopGuestSweeper = allowGuests
    ? () => {}
    : startGuestSweeper({ accounts, db, logger }, { idleMs: guestIdleMs, intervalMs: 3_600_000 });
  const unsentMs = config.ATTACHMENT_UNSENT_HOURS * 3_600_000;
  const stopAttachmentSweeper = startAttachmentSweeper(
    { db, logger },
    { intervalMs: Math.min(unsentMs, 3_600_000), maxAgeMs: unsentMs },
  );

  await discovery.ready;
  return {
    services,
    database,
    chatAgent,
    transcript,
    runnerId,
    close: async (deadline = Number.POSITIVE_INFINITY) => {
      // Each step runs even if one before it failed or ran out of time. Turns cut off here are
      // settled as interrupted by the next instance's sweeper (their lease runs out). The runner
      // gets the most time: it settles this instance's turns while the database still runs.
      const steps: Array<[string, number, () => Promise<void> | void]> = [
        ['circuit', 100, () => circuit.stop()],
        ['model discovery', 100, () => discovery.stop()],
        ['loop delay', 100, () => loopDelay.stop()],
        ['background drain', 1_000, stopDrain],
        ['sweeper', 1_000, stopSweeper],
        ['attachment sweeper', 1_000, stopAttachmentSweeper],
        ['guest sweeper', 1_000, stopGuestSweeper],
        ['rate limit sweeper', 100, stopLimitSweeper],
        ['runner', 5_000, () => runner.stop()],
        ['agent sessions', 2_000, () => driver.close?.()],
        ['stream fan-out', 100, () => streams.stop()],
        ['sessions', 100, () => sessions.stop()],
        ['signals', 1_000, () => signals.stop()],
        ['memory', 1_000, () => chatAgent.close()],
        ['database', 8_000, () => database.close()],
      ];
      for (const [name, boundMs, step] of steps) {
        const ms = Math.max(0, Math.min(boundMs, deadline - Date.now()));
        try {
          const finished = await withinMs(Promise.resolve().then(step), ms);
          if (!finished) logger.warn({ step: name, ms }, 'shutdown step did not finish in time; going on');
        } catch (error) {
          logger.warn({ err: error, step: name }, 'shutdown step failed');
        }
      }
    },
  };
}

/**
 * The bare baseline: h3 v2 + AI SDK `streamText` + `toUIMessageStreamResponse` over the API's own
 * local model, with no auth, no database and no memory. Run as its own process so its resident
 * memory and event loop are measured like the API's: `node --import tsx src/servers/baseline.ts`.
 */
import { createLocalModel } from '@chat/api/local-model';
import { streamText } from 'ai';
import { H3, readBody, serve } from 'h3';

const port = Number(process.env.BASELINE_PORT ?? 0);
const model = createLocalModel({ defaultDelayMs: Number(process.env.LOCAL_MODEL_DELAY_MS ?? 0) });

const app = new H3();
app.get('/health', () => ({ ok: true }));
app.post('/chat', async (event) => {
  const body = (await readBody<{ text?: string }>(event)) ?? {};
  const result = streamText({
    model,
    messages: [{ role: 'user', content: String(body.text ?? '') }],
    abortSignal: event.req.signal,
  });
  return result.toUIMessageStreamResponse();
});

const server = serve(app, { port, hostname: '127.0.0.1', silent: true });
await server.ready();
process.stdout.write(`baseline listening ${server.url}\n`);
const stop = () => {
  void server.close(true).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

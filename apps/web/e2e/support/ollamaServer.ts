import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An Ollama-like server of our own: its model list (`GET /api/tags`) and its OpenAI-compatible
 * chat completions (`POST /v1/chat/completions`, streamed), which answer "Hello from <model>.".
 */
export class OllamaServer {
  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(models: string[]): Promise<OllamaServer> {
    const server = createServer((request, response) => {
      if (request.method === 'GET' && request.url === '/api/tags') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ models: models.map((name) => ({ name, model: name, size: 1 })) }));
        return;
      }
      let raw = '';
      request.on('data', (chunk) => {
        raw += chunk;
      });
      request.on('end', () => {
        if (request.url !== '/v1/chat/completions') {
          response.writeHead(404).end();
          return;
        }
        const { model } = JSON.parse(raw) as { model: string };
        const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model };
        const choice = (delta: unknown, finish: string | null = null) =>
          response.write(
            `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
          );
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        choice({ role: 'assistant', content: 'Hello' });
        choice({ content: ` from ${model}.` });
        choice({}, 'stop');
        response.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new OllamaServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

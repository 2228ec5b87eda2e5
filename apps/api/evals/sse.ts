/**
 * Reads a turn's reply exactly as the browser receives it: the route's SSE response
 * (`turnStreamResponse`), byte for byte, with the text of its `text-delta` chunks.
 */
export class ReplyReader {
  /** Every byte sent, as text. */
  raw = '';
  /** The reply text the browser shows. */
  text = '';
  readonly done: Promise<void>;
  private readonly waiting = new Set<() => void>();
  private finished = false;

  constructor(response: Response) {
    this.done = this.read(response).finally(() => {
      this.finished = true;
      this.wakeAll();
    });
  }

  get words(): number {
    return this.text.split(/\s+/).filter(Boolean).length;
  }

  /** Resolves once `count` words have streamed, or the reply has ended with fewer. */
  async untilWords(count: number): Promise<void> {
    while (!this.finished && this.words < count) {
      await new Promise<void>((resolve) => this.waiting.add(resolve));
    }
  }

  private async read(response: Response): Promise<void> {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let pending = '';
    for await (const bytes of response.body) {
      const chunk = decoder.decode(bytes, { stream: true });
      this.raw += chunk;
      pending += chunk;
      const events = pending.split('\n\n');
      pending = events.pop() ?? '';
      for (const event of events) this.take(event);
      this.wakeAll();
    }
  }

  private take(event: string): void {
    for (const line of event.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const data = line.slice('data: '.length);
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data) as { type?: string; delta?: string };
      if (chunk.type === 'text-delta' && chunk.delta) this.text += chunk.delta;
    }
  }

  private wakeAll(): void {
    for (const wake of this.waiting) wake();
    this.waiting.clear();
  }
}

/** Collects a thread events SSE response (what every open tab receives) until `stop()`. */
export function collectEvents(response: Response, abort: AbortController): { stop(): Promise<string> } {
  let raw = '';
  const reading = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const bytes of response.body) raw += decoder.decode(bytes, { stream: true });
    } catch {
      // The stream ends when it is aborted below.
    }
  })();
  return {
    stop: async () => {
      abort.abort();
      await reading;
      return raw;
    },
  };
}

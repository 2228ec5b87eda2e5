import type { H3Event } from 'h3';

/**
 * The steps of one request and how long each took, for a `Server-Timing` header: anyone can see
 * in their browser's network panel where the milliseconds of a send went (W3C Server Timing:
 * `name;dur=ms`, plus `total`). Only names and durations; never what was sent.
 */
export class StepTimes {
  private readonly steps: Array<{ name: string; ms: number }> = [];
  private readonly startedAt = performance.now();

  /** Runs `work` as the step `name`. */
  async measure<T>(name: string, work: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    try {
      return await work();
    } finally {
      this.add(name, performance.now() - startedAt);
    }
  }

  /** Milliseconds since the request arrived. */
  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  add(name: string, ms: number): void {
    this.steps.push({ name, ms });
  }

  /** The header value: each step in order, then the whole request so far. */
  header(): string {
    return [...this.steps, { name: 'total', ms: this.elapsedMs() }]
      .map((step) => `${step.name};dur=${step.ms.toFixed(1)}`)
      .join(', ');
  }
}

const KEY = 'stepTimes';

/** The request's step times, made when it arrived (`requestGuard`) so every step counts. */
export function stepTimesOf(event: H3Event): StepTimes {
  const context = event.context as Record<string, unknown>;
  let times = context[KEY] as StepTimes | undefined;
  if (!times) {
    times = new StepTimes();
    context[KEY] = times;
  }
  return times;
}

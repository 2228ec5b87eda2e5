export function backoffDelay(failures: number, firstMs: number, maxMs: number): number;

export * from './client';
export * from './connect';
export * from './embedded';
export * from './migrate';
export * as schema from './schema';
export type { BranchRow, ThreadRow, TurnRow } from './schema';

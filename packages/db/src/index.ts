export * from './client';
export * from './connect';
export * from './embedded';
export * from './migrate';
export type { BranchRow, MessageFeedbackRow, ShareRow, ThreadRow, TurnRow } from './schema';
export * as schema from './schema';
export * from './startupLock';

export * from './client';
export * from './connect';
export * from './embedded';
export * from './hangWatch';
export * from './migrate';
export * from './preparedQuery';
export type {
  AttachmentRow,
  BranchRow,
  ContextMarkerRow,
  HitlRequestRow,
  MessageFeedbackRow,
  NoteRow,
  ReplySnapshot,
  SettleOutcome,
  ShareRow,
  ThreadRow,
  TurnRow,
} from './schema';
export * as schema from './schema';
export * from './startupLock';

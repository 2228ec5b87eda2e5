/**
 * The app's tables (schema `public`), for Drizzle and drizzle-kit: every table file, re-exported.
 * The table files import each other downwards only (chat tables from the auth ones, attachments and
 * lineage from the chat ones); this file only gathers them.
 */
export * from './accountSettingsSchema';
export * from './attachmentSchema';
export * from './authSchema';
export * from './chatSchema';
export * from './contextSchema';
export * from './lineageSchema';
export * from './platformSchema';

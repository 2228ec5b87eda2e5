import { pgTable, text } from 'drizzle-orm/pg-core';
import { user } from './authSchema';
import { updatedAt } from './columns';

/**
 * A person's own settings beside better-auth's `user` table (which better-auth owns): their custom
 * instructions for every chat (M4) and the model they picked last, which a new chat starts with
 * (M2). No row: no instructions, the default model.
 */
export const accountSettings = pgTable('account_settings', {
  ownerId: text('owner_id')
    .primaryKey()
    .references(() => user.id, { onDelete: 'cascade' }),
  instructions: text('instructions').notNull().default(''),
  lastModel: text('last_model'),
  updatedAt: updatedAt(),
});

export type AccountSettingsRow = typeof accountSettings.$inferSelect;

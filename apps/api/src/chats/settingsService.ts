import type { AccountSettings, ModelList, UpdateAccountSettingsBody } from '@chat/contracts';
import type { Database } from '@chat/db';
import type { ModelRegistry } from '../agent/models';
import { readAccountSettings, saveAccountSettings } from './threads/choices';

export interface SettingsServiceDeps {
  db: Database;
  models: ModelRegistry;
}

/** What a person may choose for their chats: the configured models (M1) and their own instructions (M4). */
export class SettingsService {
  constructor(private readonly deps: SettingsServiceDeps) {}

  /** The configured models, the default first; never a key or a URL. */
  models(): ModelList {
    return { models: this.deps.models.list() };
  }

  async account(ownerId: string): Promise<AccountSettings> {
    return await readAccountSettings(this.deps.db, ownerId);
  }

  /** New instructions reach each chat's next turn; a running reply keeps what it started with. */
  async updateAccount(ownerId: string, changes: UpdateAccountSettingsBody): Promise<AccountSettings> {
    if (changes.instructions !== undefined)
      await saveAccountSettings(this.deps.db, ownerId, { instructions: changes.instructions.trim() });
    return await this.account(ownerId);
  }
}

import { z } from 'zod';
import { MAX_INSTRUCTIONS_LENGTH } from './limits';

/** One model the API offers (M1): never its key or URL. */
export interface ChatModel {
  /** What a chat, a reply's metadata and a regenerate name it by. */
  id: string;
  label: string;
  /** Its context window in tokens (C2's meter uses the chat's model's). */
  contextWindow: number;
  /**
   * The most tokens of documents' text one message gives this model (D1: the deployment's
   * budget); what its window leaves can be less (`documentTokensFor`).
   */
  documentTokens: number;
  /**
   * The built-in demo model (`local`): scripted replies, no AI. While it is all there is, the
   * start page says how to connect a real model.
   */
  builtIn: boolean;
  /**
   * False while the server that lists it does not answer (a `compatible:*@…` entry found down):
   * the picker shows it but does not offer it (M5).
   */
  available: boolean;
}

/** `GET /api/models`: the configured models, the default first. */
export interface ModelList {
  models: ChatModel[];
}

/** A model id as a body names it; whether it is configured is the API's check. */
export const modelId = z.string().trim().min(1).max(100);

/**
 * Custom instructions (M4), per chat or per account: given to the model after the built-in ones.
 * An empty string clears them.
 */
export const customInstructions = z.string().max(MAX_INSTRUCTIONS_LENGTH);

/** `GET`/`PATCH /api/account/settings`: the person's own settings. */
export interface AccountSettings {
  /** Given to every chat's model after the built-in instructions (M4); '' when none. */
  instructions: string;
  /** The model the person picked last: a new chat starts with it (M2); null before any pick. */
  lastModel: string | null;
}

export const updateAccountSettingsBody = z
  .object({ instructions: customInstructions.optional() })
  .refine((body) => body.instructions !== undefined, 'nothing to change');
export type UpdateAccountSettingsBody = z.infer<typeof updateAccountSettingsBody>;

import { turnErrorMessages } from '@chat/contracts';
import { isDatabaseError } from '../../platform/databaseErrors';
import { WordedFailure } from '../../platform/errors';

/**
 * F3: the one home of what a person reads about a reply that failed, whatever failed it. The
 * words are the contract's (`turnErrorMessages`): what happened and what the person can do. What
 * the error itself said (a database's or a driver's message, a query, a provider's answer) is for
 * the log only; callers log `error` as it is (the logger keeps SQL parameters out). `failing`:
 * what was under way, for an error that is neither already worded nor the database's: the model
 * call (a driver's `error` event) or the server's own part of the run.
 */
export function failureWording(error: unknown, failing: 'model' | 'server'): string {
  if (error instanceof WordedFailure) return error.message;
  if (isDatabaseError(error)) return turnErrorMessages.databaseFailed;
  return failing === 'model' ? turnErrorMessages.modelFailed : turnErrorMessages.unknown;
}

import { updateAccountSettingsBody } from '@chat/contracts';
import type { H3 } from 'h3';
import { readJson } from '../platform/http';
import { authedRoutes } from './route';
import type { ApiServices } from './services';

/** The models a chat may use (M1) and the person's own instructions (M4). */
export function registerSettingsRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const { settings } = services;

  route('get', '/api/models', () => settings.models());

  route('get', '/api/account/settings', (_event, userId) => settings.account(userId));

  route('patch', '/api/account/settings', async (event, userId) =>
    settings.updateAccount(userId, await readJson(event, updateAccountSettingsBody)),
  );
}

import { pathOf } from '@chat/contracts';
import { refuse } from '../utils/refusal';

/**
 * Requests the web app has no page for get a JSON 404/405 instead of the app's HTML (which a
 * browser would otherwise cache, or a client take for success). Built files under /_nuxt/ were
 * served before this runs, so whatever reaches it there is missing.
 * - `//api/...` and `/API/...`: look like the API but are not its address: 404.
 * - `/_nuxt/<missing>`: 404, not the app shell marked immutable for a year.
 * - Pages answer GET and HEAD only: anything else is 405. (/api/** is the proxy's to judge.)
 */
export default defineEventHandler((event) => {
  const path = pathOf(event.node.req.url ?? '/');
  if (path === '/api' || path.startsWith('/api/')) return;
  if (path.startsWith('//') || /^\/api(\/|$)/i.test(path)) return refuse(event, 'not_found');
  // In development Vite serves /_nuxt/ itself, after this middleware.
  if (!import.meta.dev && path.startsWith('/_nuxt/')) return refuse(event, 'not_found');
  const method = event.node.req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD')
    return refuse(event, 'method_not_allowed', { headers: { allow: 'GET, HEAD' } });
});

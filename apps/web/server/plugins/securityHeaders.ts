import { setResponseHeaders } from 'h3';
import { contentSecurityPolicy, inlineScriptHashes, securityHeaders } from '../utils/securityHeaders';

/**
 * Security headers on every response, static files and proxied API answers included (the
 * `request` hook runs before any handler); the page shell's CSP also names its inline scripts by
 * hash. Nuxt's `x-powered-by` is dropped.
 */
export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hook('request', (event) => {
    setResponseHeaders(event, securityHeaders);
  });
  nitroApp.hooks.hook('render:response', (response) => {
    response.headers ??= {};
    const headers = response.headers;
    delete headers['x-powered-by'];
    if (typeof response.body === 'string')
      headers['content-security-policy'] = contentSecurityPolicy(inlineScriptHashes(response.body));
  });
});

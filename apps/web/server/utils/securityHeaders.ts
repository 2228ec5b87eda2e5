import { createHash } from 'node:crypto';

/**
 * The app's Content-Security-Policy: scripts only from its own origin, plus the inline scripts
 * of the page shell named by hash; never framed; no plugins, no foreign connections. Styles may
 * be inline (Vue and Nuxt UI set style attributes and inject theme <style> tags at run time).
 */
export function contentSecurityPolicy(scriptHashes: readonly string[] = []): string {
  return [
    "default-src 'self'",
    `script-src 'self'${scriptHashes.map((hash) => ` '${hash}'`).join('')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every response carries (the page shell's CSP adds its script hashes). */
export const securityHeaders: Record<string, string> = {
  'content-security-policy': contentSecurityPolicy(),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  // For browsers that predate frame-ancestors.
  'x-frame-options': 'DENY',
};

const SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script>/gi;
/** Script types a browser runs; others (application/json data) are inert and need no hash. */
const RUNNABLE_TYPES = new Set(['', 'module', 'importmap', 'text/javascript', 'application/javascript']);

/**
 * `sha256-...` of each inline script in `html` that a browser would run. Nuxt's SPA shell has
 * four: the import map, the color-mode script, the loading outline's (`spa-loading-template.html`)
 * and `window.__NUXT__`'s config. The shell is built
 * from the build and the run-time config only (no request data, no user content: `ssr: false`),
 * so hashing what it holds allows exactly those scripts and nothing injected.
 */
export function inlineScriptHashes(html: string): string[] {
  const hashes = new Set<string>();
  for (const [, attributes = '', content = ''] of html.matchAll(SCRIPT)) {
    if (/\ssrc\s*=/i.test(attributes)) continue;
    const type = /\stype\s*=\s*["']?([^"'\s>]*)/i.exec(attributes)?.[1]?.toLowerCase() ?? '';
    if (!RUNNABLE_TYPES.has(type)) continue;
    hashes.add(`sha256-${createHash('sha256').update(content, 'utf8').digest('base64')}`);
  }
  return [...hashes];
}

// Offline-safe configuration: no CDN fonts or icons, no telemetry (the build machines reach no CDN).
export default defineNuxtConfig({
  compatibilityDate: '2026-11-01',
  modules: ['@nuxt/ui'],
  // The app is session-bound and live (guest cookie, SSE streams): rendering it on the
  // server would add a second place to create sessions and gains nothing, so it is an SPA.
  ssr: false,
  devtools: { enabled: false },
  telemetry: false,
  css: ['~/assets/css/main.css'],
  ui: { fonts: false },
  icon: {
    provider: 'server',
    serverBundle: { collections: ['lucide'] },
    fallbackToApi: false,
    // The default endpoint lives under /api, which the catch-all proxy owns.
    localApiEndpoint: '/_nuxt_icon',
  },
  app: {
    head: {
      title: 'Chat',
      htmlAttrs: { lang: 'en' },
      meta: [{ name: 'description', content: 'Keep talking while the assistant answers.' }],
    },
  },
  // Shared snapshots are for the people who get the link, not for search engines (the page
  // also says so in its robots meta).
  routeRules: {
    '/share/**': { headers: { 'x-robots-tag': 'noindex, nofollow' } },
  },
  // Built files are written beside a .gz and a .br copy, and Nitro serves the smallest one the
  // browser accepts (Content-Encoding, Vary: Accept-Encoding); nothing is compressed per request.
  nitro: {
    compressPublicAssets: { gzip: true, brotli: true },
  },
  runtimeConfig: {
    // Where the API listens; the server route in server/api proxies /api/** to it.
    // Overridden at run time by NUXT_API_ORIGIN.
    apiOrigin: 'http://127.0.0.1:3001',
  },
  vite: {
    // Pre-bundled up front, so the first visit in dev does not reload the page to add them.
    optimizeDeps: {
      include: [
        'ai',
        'better-auth/client/plugins',
        'better-auth/vue',
        'highlight.js/lib/common',
        'markdown-it',
      ],
    },
  },
  devServer: {
    port: Number(process.env.NUXT_PORT ?? process.env.PORT ?? 3000),
  },
});

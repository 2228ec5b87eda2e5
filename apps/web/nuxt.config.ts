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
    // In the app's bundle, so icons are there at the first paint instead of coming with a request
    // after it: those our components name (scanned) and those Nuxt UI's components use (its
    // `ui.icons` defaults). An icon missing here still comes from the endpoint above.
    clientBundle: {
      scan: true,
      icons: [
        'lucide:arrow-down',
        'lucide:arrow-left',
        'lucide:arrow-right',
        'lucide:arrow-up',
        'lucide:arrow-up-right',
        'lucide:check',
        'lucide:chevron-down',
        'lucide:chevron-left',
        'lucide:chevron-right',
        'lucide:chevron-up',
        'lucide:chevrons-left',
        'lucide:chevrons-right',
        'lucide:circle-alert',
        'lucide:circle-check',
        'lucide:circle-x',
        'lucide:copy',
        'lucide:copy-check',
        'lucide:ellipsis',
        'lucide:eye',
        'lucide:eye-off',
        'lucide:file',
        'lucide:folder',
        'lucide:folder-open',
        'lucide:grip-vertical',
        'lucide:hash',
        'lucide:info',
        'lucide:lightbulb',
        'lucide:loader-circle',
        'lucide:menu',
        'lucide:minus',
        'lucide:monitor',
        'lucide:moon',
        'lucide:panel-left-close',
        'lucide:panel-left-open',
        'lucide:plus',
        'lucide:rotate-ccw',
        'lucide:search',
        'lucide:square',
        'lucide:star',
        'lucide:sun',
        'lucide:triangle-alert',
        'lucide:upload',
        'lucide:x',
      ],
    },
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

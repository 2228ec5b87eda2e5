/**
 * Proxies every /api/** request to the API (runtimeConfig.apiOrigin, env NUXT_API_ORIGIN).
 *
 * A server route rather than a routeRules proxy because: the target is read at run time,
 * the request body is streamed through, and a client disconnect aborts the upstream fetch
 * (an SSE subscriber that goes away must not keep an API connection open). Responses,
 * SSE included, are written through chunk by chunk; cookies pass both ways untouched.
 */
export default defineEventHandler(async (event) => {
  const { apiOrigin } = useRuntimeConfig(event);
  const target = new URL(event.path, apiOrigin).toString();

  const upstream = new AbortController();
  event.node.res.once('close', () => {
    if (!event.node.res.writableFinished) upstream.abort();
  });

  try {
    return await proxyRequest(event, target, {
      streamRequest: true,
      fetchOptions: { signal: upstream.signal },
    });
  } catch (error) {
    // The browser went away mid-response: nothing is left to answer.
    if (upstream.signal.aborted) return;
    // The API is not listening (restarting, down): answer as the API does when it cannot serve,
    // so the app says it is reconnecting and tries again.
    if (isError(error) && error.statusCode === 502) {
      setResponseStatus(event, 503);
      return { error: { code: 'unavailable', message: 'The API cannot be reached right now.' } };
    }
    throw error;
  }
});

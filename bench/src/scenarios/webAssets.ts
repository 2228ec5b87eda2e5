import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { describeError } from '../errors';
import { repoRoot, type ServerProcess, startWeb } from '../processes';
import type { Row } from '../rows';

const CHROMIUM = process.env.BENCH_CHROMIUM ?? '/usr/bin/chromium';
const webDir = join(repoRoot, 'apps/web');

interface Served {
  url: string;
  kind: 'script' | 'stylesheet';
  /** Bytes on the wire (the body as sent). */
  bytes: number;
  decodedBytes: number;
  /** What gzip (default level) would send, to show what compression would save. */
  gzipBytes: number;
  encoding: string;
}

/** GET with `Accept-Encoding: gzip, br`, counting the body as sent (node:http does not decode). */
function fetchRaw(url: string): Promise<{ body: Buffer; encoding: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'accept-encoding': 'gzip, br' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          body: Buffer.concat(chunks),
          encoding: String(response.headers['content-encoding'] ?? ''),
        }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function decode(body: Buffer, encoding: string): Buffer {
  if (encoding === 'gzip') return gunzipSync(body);
  if (encoding === 'br') return brotliDecompressSync(body);
  return body;
}

/** The scripts and stylesheets a real browser loads for the start page. */
async function firstLoadAssets(webUrl: string): Promise<Array<{ url: string; kind: Served['kind'] }>> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    const assets = new Map<string, Served['kind']>();
    page.on('request', (req) => {
      const type = req.resourceType();
      if (type === 'script' || type === 'stylesheet') assets.set(req.url(), type);
    });
    await page.goto(webUrl, { waitUntil: 'load', timeout: 120_000 });
    await page.waitForSelector('html[data-hydrated]', { state: 'attached', timeout: 120_000 });
    await page.waitForTimeout(1_000);
    return [...assets].map(([url, kind]) => ({ url, kind }));
  } finally {
    await browser.close();
  }
}

const kb = (bytes: number) => (bytes / 1024).toFixed(0);

/** Builds the web app when there is no production build (full mode only). */
function ensureBuild(quick: boolean, log: (message: string) => void): string | undefined {
  if (existsSync(join(webDir, '.output/server/index.mjs'))) return undefined;
  if (quick) return 'no production build (apps/web/.output); --quick does not build it';
  log('web: building the web app (nuxt build)');
  const result = spawnSync(process.execPath, [join(webDir, 'node_modules/nuxt/bin/nuxt.mjs'), 'build'], {
    cwd: webDir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return result.status === 0 ? undefined : `nuxt build failed (${result.status})`;
}

/** First-load JavaScript and CSS of the start page, as served (compressed if the server compresses). */
export async function measureWebAssets(options: {
  quick: boolean;
  port: number;
  apiOrigin: string;
  log(message: string): void;
}): Promise<Row[]> {
  const notRun = (reason: string): Row[] => [
    { id: 'web-js', figure: 'first-load JavaScript, as served', unit: 'KB', notRun: reason },
    { id: 'web-css', figure: 'first-load CSS, as served', unit: 'KB', notRun: reason },
  ];
  if (!existsSync(CHROMIUM)) return notRun(`no Chromium at ${CHROMIUM}`);
  const missing = ensureBuild(options.quick, options.log);
  if (missing) return notRun(missing);

  let web: ServerProcess | undefined;
  try {
    options.log('web: starting the production build');
    web = await startWeb(options.port, options.apiOrigin);
    options.log('web: loading the start page in Chromium');
    const assets = await firstLoadAssets(web.baseUrl);
    const served: Served[] = [];
    for (const asset of assets) {
      const { body, encoding } = await fetchRaw(asset.url);
      const plain = decode(body, encoding);
      served.push({
        ...asset,
        bytes: body.length,
        decodedBytes: plain.length,
        gzipBytes: gzipSync(plain).length,
        encoding,
      });
    }
    return (['script', 'stylesheet'] as const).map((kind) => {
      const files = served.filter((entry) => entry.kind === kind);
      const bytes = files.reduce((total, entry) => total + entry.bytes, 0);
      const raw = files.reduce((total, entry) => total + entry.decodedBytes, 0);
      const gzipped = files.reduce((total, entry) => total + entry.gzipBytes, 0);
      // Files under 1 KB are sent as they are (Nitro does not precompress them: a compressed copy
      // would save a few bytes at best); every larger file must go compressed.
      const worthCompressing = files.filter((entry) => entry.decodedBytes >= 1024);
      const compressed = worthCompressing.filter((entry) => entry.encoding !== '').length;
      const largest = [...files].sort((a, b) => b.bytes - a.bytes)[0];
      return {
        id: kind === 'script' ? 'web-js' : 'web-css',
        figure: `first-load ${kind === 'script' ? 'JavaScript' : 'CSS'}, as served`,
        unit: 'KB',
        app: bytes / 1024,
        ratio: `${kb(raw)} KB uncompressed, ${kb(gzipped)} KB gzipped; ${compressed}/${worthCompressing.length} files of 1 KB or more sent compressed`,
        target: 'served compressed (gzip or br)',
        met: files.length > 0 && compressed === worthCompressing.length,
        note: largest
          ? `${files.length} files; largest ${new URL(largest.url).pathname} (${kb(largest.bytes)} KB as sent)`
          : 'no files',
      } satisfies Row;
    });
  } catch (error) {
    return notRun(`failed: ${describeError(error).split('\n')[0]}`);
  } finally {
    await web?.stop();
  }
}

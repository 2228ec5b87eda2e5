#!/usr/bin/env node
// Checks, before any test runs, that the browser the Playwright tests drive is there: Debian's
// Chromium at /usr/bin/chromium (`playwright install` cannot reach its CDN from the build
// machines), or the executable named by CHROMIUM_PATH. Without it every browser spec fails at
// launch, after minutes of lint, typecheck and API tests; this fails in a second instead, with the
// command that installs it. Run as root (a container, CI), it installs Debian's package itself.
//   node scripts/check-browser.mjs
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where Debian's `chromium` package puts the browser. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
export const INSTALL_COMMAND = 'apt-get install -y chromium';

/** The browser the tests use: CHROMIUM_PATH, else Debian's. */
export function chromiumPath(env = process.env) {
  return env.CHROMIUM_PATH || DEBIAN_CHROMIUM;
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs apt-get as Debian's own CI images do; true when both steps succeed. */
function aptInstall() {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'chromium']]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.status !== 0) return false;
  }
  return true;
}

/**
 * Whether the tests can start a browser at `path`. Missing: as root, and when the path is the one
 * Debian's package fills, it is installed; otherwise the answer says what to run.
 */
export function checkBrowser({
  path = chromiumPath(),
  isRoot = process.getuid?.() === 0,
  exists = isExecutable,
  install = aptInstall,
} = {}) {
  if (exists(path)) return { ok: true, installed: false, message: `Chromium: ${path}` };
  if (isRoot && path === DEBIAN_CHROMIUM) {
    if (install() && exists(path))
      return { ok: true, installed: true, message: `Installed Chromium: ${path}` };
    return {
      ok: false,
      installed: false,
      message: `Could not install Chromium (${INSTALL_COMMAND} failed, see above). The browser tests need it at ${path}.`,
    };
  }
  const how =
    path === DEBIAN_CHROMIUM
      ? `Install it (Debian or Ubuntu) with:\n\n  sudo ${INSTALL_COMMAND}\n`
      : `Point CHROMIUM_PATH at a Chromium executable, or unset it to use Debian's (sudo ${INSTALL_COMMAND}).\n`;
  return {
    ok: false,
    installed: false,
    message: `The browser tests need Chromium at ${path}, and it is not there. ${how}\nThen run the tests again.`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = checkBrowser();
  if (result.ok) {
    if (result.installed) console.log(result.message);
  } else {
    console.error(result.message);
    process.exit(1);
  }
}

// node --test scripts/: the browser check that runs before the tests (check-browser.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkBrowser, DEBIAN_CHROMIUM, INSTALL_COMMAND } from './check-browser.mjs';

const script = fileURLToPath(new URL('./check-browser.mjs', import.meta.url));
const never = () => assert.fail('must not install');

test('a browser that is there passes, and nothing is installed', () => {
  const result = checkBrowser({ path: process.execPath, isRoot: true, install: never });
  assert.equal(result.ok, true);
  assert.equal(result.installed, false);
});

test('missing, not root: fails with the one command that installs it', () => {
  const result = checkBrowser({ path: DEBIAN_CHROMIUM, isRoot: false, exists: () => false, install: never });
  assert.equal(result.ok, false);
  assert.match(result.message, new RegExp(`sudo ${INSTALL_COMMAND}`));
  assert.match(result.message, /\/usr\/bin\/chromium/);
});

test("missing, as root: installs Debian's package and passes once it is there", () => {
  let installed = false;
  const result = checkBrowser({
    path: DEBIAN_CHROMIUM,
    isRoot: true,
    exists: () => installed,
    install: () => {
      installed = true;
      return true;
    },
  });
  assert.deepEqual([result.ok, result.installed], [true, true]);
});

test('missing, as root, and the install fails: says so and fails', () => {
  const result = checkBrowser({
    path: DEBIAN_CHROMIUM,
    isRoot: true,
    exists: () => false,
    install: () => false,
  });
  assert.equal(result.ok, false);
  assert.match(result.message, /Could not install Chromium/);
});

test('a CHROMIUM_PATH that is not there is never "fixed" by apt-get, root or not', () => {
  const result = checkBrowser({
    path: '/nowhere/chromium',
    isRoot: true,
    exists: () => false,
    install: never,
  });
  assert.equal(result.ok, false);
  assert.match(result.message, /CHROMIUM_PATH/);
});

test('the command exits 1 with the advice on stderr, and 0 when the browser is there', () => {
  const missing = spawnSync(process.execPath, [script], {
    env: { ...process.env, CHROMIUM_PATH: '/nowhere/chromium' },
    encoding: 'utf8',
  });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /need Chromium at \/nowhere\/chromium/);

  const present = spawnSync(process.execPath, [script], {
    env: { ...process.env, CHROMIUM_PATH: process.execPath },
    encoding: 'utf8',
  });
  assert.equal(present.status, 0);
});

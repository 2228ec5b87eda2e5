// Started as its own process by the tests: loads the embedded server's module (the package hooks
// the shutdown signals as it loads), hands them back to the process, and handles SIGTERM itself:
// it says so, waits a moment as a real shutdown would, and exits 0.
import { leaveShutdownSignalsToCaller } from '../../src/embedded';

leaveShutdownSignalsToCaller();
process.on('SIGTERM', () => {
  process.stdout.write('shutting down on my own\n');
  setTimeout(() => process.exit(0), 300);
});
process.stdout.write('ready\n');
setInterval(() => {}, 60_000);

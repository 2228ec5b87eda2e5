import { describe, expect, it } from 'vitest';
import { describeDevice } from '../src/accounts/device';

describe('session devices', () => {
  it('names devices from their user agent', () => {
    const chromeLinux =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
    const safariIphone =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';
    const firefoxWindows = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0';
    expect(describeDevice(chromeLinux)).toBe('Chrome on Linux');
    expect(describeDevice(safariIphone)).toBe('Safari on iOS');
    expect(describeDevice(firefoxWindows)).toBe('Firefox on Windows');
    expect(describeDevice(null)).toBe('Unknown device');
  });
});

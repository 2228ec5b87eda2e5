import { describe, expect, it } from 'vitest';
import { LiveToolPolicy } from '../src/agent/toolPolicy';

describe('a running reply’s view of its tool settings (T2)', () => {
  it('follows each read, and leaves every tool off for the rest of the run once a read fails', async () => {
    let answer: () => Record<string, 'off' | 'ask' | 'allow'> = () => ({ current_time: 'ask' });
    const policy = new LiveToolPolicy(async () => answer(), { current_time: 'allow' });
    expect(policy.modeOf('current_time')).toBe('allow');
    await policy.refresh();
    expect(policy.modeOf('current_time')).toBe('ask');
    // A tool the settings do not name is not offered.
    expect(policy.modeOf('launch_rockets')).toBe('off');

    answer = () => {
      throw new Error('the database went away');
    };
    await policy.refresh();
    expect(policy.modeOf('current_time')).toBe('off');
    answer = () => ({ current_time: 'allow' });
    await policy.refresh();
    expect(policy.modeOf('current_time')).toBe('off');
  });
});

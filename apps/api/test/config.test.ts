import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config';

describe('configuration', () => {
  it('starts on the embedded defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      API_PORT: 3001,
      CHAT_MODEL: 'local',
      LOCAL_MODEL_DELAY_MS: 30,
      TURN_LEASE_MS: 15_000,
      AUTH_ALLOW_GUESTS: true,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.DATA_DIR.endsWith('/.data')).toBe(true);
  });

  it('stops with a message naming each bad value', () => {
    const bad = () => loadConfig({ API_PORT: 'eighty', CHAT_MODEL: 'gpt-4', DATABASE_URL: 'not a url' });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/API_PORT/);
    expect(bad).toThrow(/CHAT_MODEL: must be "local" or "openai:<model>"/);
    expect(bad).toThrow(/DATABASE_URL/);
  });

  it('needs a key or a base URL for an OpenAI model', () => {
    expect(() => loadConfig({ CHAT_MODEL: 'openai:gpt-4o-mini' })).toThrow(/OPENAI_API_KEY/);
    expect(
      loadConfig({ CHAT_MODEL: 'openai:llama3', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }).CHAT_MODEL,
    ).toBe('openai:llama3');
  });

  it('reads AUTH_ALLOW_GUESTS as true or false, nothing else', () => {
    expect(loadConfig({ AUTH_ALLOW_GUESTS: 'false' }).AUTH_ALLOW_GUESTS).toBe(false);
    expect(loadConfig({ AUTH_ALLOW_GUESTS: 'true' }).AUTH_ALLOW_GUESTS).toBe(true);
    expect(() => loadConfig({ AUTH_ALLOW_GUESTS: 'no' })).toThrow(/AUTH_ALLOW_GUESTS/);
  });

  it('reads QUEUE_DRAIN as viewer (the default) or background, and stops on anything else', () => {
    expect(loadConfig({}).QUEUE_DRAIN).toBe('viewer');
    expect(loadConfig({ QUEUE_DRAIN: 'background' }).QUEUE_DRAIN).toBe('background');
    expect(loadConfig({ QUEUE_DRAIN: '' }).QUEUE_DRAIN).toBe('viewer');
    expect(() => loadConfig({ QUEUE_DRAIN: 'always' })).toThrow(ConfigError);
    expect(() => loadConfig({ QUEUE_DRAIN: 'always' })).toThrow(/QUEUE_DRAIN/);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', EMBEDDED_PG_PORT: '' }).DATABASE_URL).toBeUndefined();
  });
});

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

  it('reads MCP_SERVERS as a JSON list of stdio or HTTP servers (T3)', () => {
    expect(loadConfig({}).MCP_SERVERS).toEqual([]);
    const servers = loadConfig({
      MCP_SERVERS: JSON.stringify([
        { name: 'files', command: 'node', args: ['server.js'], env: { TOKEN: 'secret' } },
        { name: 'search-1', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
      ]),
    }).MCP_SERVERS;
    expect(servers).toEqual([
      expect.objectContaining({ transport: 'stdio', name: 'files', command: 'node', args: ['server.js'] }),
      expect.objectContaining({ transport: 'http', name: 'search-1', url: 'https://mcp.example.com/mcp' }),
    ]);
  });

  it('stops on a bad MCP_SERVERS with a message naming the entry and what is wrong', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['not json', /MCP_SERVERS: must be a JSON list of servers/],
      [[{ name: 'a' }], /MCP_SERVERS\.0: needs either "command" \(stdio\) or "url" \(HTTP\)/],
      [[{ name: 'a', command: 'x', url: 'http://127.0.0.1/mcp' }], /MCP_SERVERS\.0: needs either/],
      [[{ name: 'has_underscore', command: 'x' }], /MCP_SERVERS\.0\.name: must be 1 to 32 letters/],
      [[{ name: 'a', url: 'ftp://example.com' }], /MCP_SERVERS\.0\.url: must be an http\(s\) URL/],
      [[{ name: 'a', url: 'http://127.0.0.1/mcp', env: { A: 'b' } }], /"env".* go with "command"/],
      [[{ name: 'a', command: 'x', headers: { A: 'b' } }], /"headers" go with "url"/],
      [[{ name: 'a', command: 'x', shell: true }], /MCP_SERVERS\.0/],
      [
        [
          { name: 'a', command: 'x' },
          { name: 'a', command: 'y' },
        ],
        /MCP_SERVERS\.1\.name: "a" is named twice/,
      ],
      // Too many is said as such, not as a list that is not one.
      [
        Array.from({ length: 21 }, (_, index) => ({ name: `s${index}`, command: 'x' })),
        /MCP_SERVERS: at most 20 servers, not 21/,
      ],
    ];
    for (const [value, message] of cases) {
      const load = () =>
        loadConfig({ MCP_SERVERS: typeof value === 'string' ? value : JSON.stringify(value) });
      expect(load, JSON.stringify(value)).toThrow(ConfigError);
      expect(load, JSON.stringify(value)).toThrow(message);
    }
  });

  it("never puts an MCP server's env or headers into a configuration error", () => {
    const load = () =>
      loadConfig({
        MCP_SERVERS: JSON.stringify([
          { name: 'bad name', command: 'x', env: { TOKEN: 'very-secret-value' } },
        ]),
      });
    expect(load).toThrow(ConfigError);
    expect(load).not.toThrow(/very-secret-value/);
  });
});

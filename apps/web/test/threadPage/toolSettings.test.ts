import { describe, expect, it } from 'vitest';
import { toolSettingsView } from '../../app/threadPage/views';
import { detail, exchange, Page, queueOf, server, THREAD, turn } from '../support/threadFacts';

/** T1: the chat's tool settings panel, as the page state keeps it. */

const modes = (page: Page) =>
  Object.fromEntries(toolSettingsView(page.state).tools.map((tool) => [tool.name, tool.mode]));

/** An MCP server's tool, as the detail lists it (T3). */
const echo = {
  name: 'mcp__files__echo',
  description: 'Echo.',
  mode: 'ask',
  defaultMode: 'ask',
  server: 'files',
} as const;

describe('the tool settings panel', () => {
  it("shows the detail's settings, a change at once, and the stored mode once the server took it", () => {
    const page = Page.opened(detail([...exchange('hi')]));
    expect(modes(page)).toEqual({ current_time: 'allow', save_note: 'ask' });
    page.feed({ type: 'toolMode.requested', name: 'save_note', mode: 'allow' });
    expect(modes(page)).toEqual({ current_time: 'allow', save_note: 'allow' });
    page.feed({ type: 'toolMode.answered', name: 'save_note' });
    expect(modes(page)).toEqual({ current_time: 'allow', save_note: 'allow' });
    expect(page.state.toolsWanted).toEqual({});
  });

  it('goes back to the stored mode and says why when the server refuses', () => {
    const page = Page.opened(detail([...exchange('hi')]));
    page.feed({ type: 'toolMode.requested', name: 'current_time', mode: 'off' });
    page.feed({
      type: 'toolMode.refused',
      name: 'current_time',
      error: { status: 400, code: 'bad_request', message: 'No.', retryable: false },
    });
    expect(modes(page).current_time).toBe('allow');
    expect(page.state.notice?.message).toBe('No.');
  });

  it('reads the settings again when another tab changed them, and says a running reply takes them at its next step', () => {
    const page = Page.opened(detail([...exchange('hi')], queueOf(turn('a', 'running'))));
    expect(toolSettingsView(page.state).replyRunning).toBe(true);
    page.feed(server({ type: 'thread.changed', threadId: THREAD }));
    expect(page.effectTypes()).toContain('readDetail');
  });

  it("shows an MCP server's tools with the built-in ones, and names the servers that are unavailable (T3)", () => {
    const opened = detail([...exchange('hi')]);
    const page = Page.opened({
      ...opened,
      tools: [...opened.tools, echo],
      toolServers: [
        { name: 'files', status: 'available' },
        { name: 'search', status: 'unavailable' },
        { name: 'slowpoke', status: 'starting' },
      ],
    });
    const view = toolSettingsView(page.state);
    expect(view.tools.map((tool) => tool.name)).toEqual(['current_time', 'save_note', 'mcp__files__echo']);
    expect(view.tools[2]?.server).toBe('files');
    expect(view.serversAway).toEqual([
      { name: 'search', status: 'unavailable' },
      { name: 'slowpoke', status: 'starting' },
    ]);
  });

  it('reads the detail again when the panel opens, and shows an MCP server that went away since (T3)', () => {
    const opened = detail([...exchange('hi')]);
    const page = Page.opened({
      ...opened,
      tools: [...opened.tools, echo],
      toolServers: [{ name: 'files', status: 'available' }],
    });
    expect(page.effectTypes()).not.toContain('readDetail');
    page.feed({ type: 'toolPanel.opened' });
    expect(page.effectTypes()).toContain('readDetail');
    page.readDetail({ ...opened, toolServers: [{ name: 'files', status: 'unavailable' }] });
    const view = toolSettingsView(page.state);
    expect(view.tools.map((tool) => tool.name)).toEqual(['current_time', 'save_note']);
    expect(view.serversAway).toEqual([{ name: 'files', status: 'unavailable' }]);
  });
});

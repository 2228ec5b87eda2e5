import { expect, test } from './fixtures';

/**
 * T3: tools from MCP servers in the page. The Playwright API runs the test MCP server as `fixture`
 * and a server that cannot start as `broken` (playwright.config.ts).
 */
test.describe('tools from MCP servers (T3)', () => {
  test("the panel shows an MCP server's tools beside the built-in ones, and a server that is unavailable", async ({
    chat,
  }) => {
    await chat.startThread('hello [[words:3]]');
    await chat.waitForIdle();
    const page = chat.page;
    // Opening the panel reads the thread again: servers come and go while a page stays open.
    const reread = page.waitForRequest(
      (request) =>
        request.method() === 'GET' && /^\/api\/threads\/[^/]+$/.test(new URL(request.url()).pathname),
    );
    await page.getByTestId('tool-settings-open').click();
    await reread;
    const fromFixture = page.getByRole('region', { name: 'Tools from fixture' });
    await expect(fromFixture).toBeVisible();
    const echo = fromFixture.getByRole('group', { name: 'echo', exact: true });
    await expect(echo.getByRole('radio', { name: 'Ask', exact: true })).toBeChecked();
    await expect(fromFixture.getByText('Repeats the text it is given.')).toBeVisible();
    await expect(
      page.getByRole('region', { name: 'Built-in tools' }).getByRole('group', { name: 'save_note' }),
    ).toBeVisible();
    await expect(page.getByTestId('tool-server-broken')).toContainText('broken: unavailable');
    // A server that is away offers no tools.
    await expect(page.getByTestId(/^tool-setting-mcp__broken__/)).toHaveCount(0);
  });

  test('an MCP tool asks first, runs once approved, and its result shows like a built-in tool', async ({
    chat,
  }) => {
    await chat.startThread('hello mcp [[tool:mcp__fixture__echo]] [[words:30]]');
    // The approved call's reply continues below it: find the card in the transcript.
    const card = chat.transcript.getByTestId('tool-call').last();
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await expect(
      chat.assistantMessages.filter({
        hasText: 'The tool mcp__fixture__echo returned {"text":"echo: hello mcp"}.',
      }),
    ).toHaveCount(1);
    await chat.waitForIdle();
    await expect(card.getByTestId('tool-call-outcome')).toHaveText('You approved running echo from fixture');
    await card.getByTestId('tool-call-toggle').click();
    await expect(card.getByTestId('tool-call-args')).toContainText('"text": "hello mcp"');
    await expect(card.getByTestId('tool-call-result')).toContainText('"text": "echo: hello mcp"');
  });
});

# Tools from MCP servers (T3), in Gherkin. Automated in apps/api/test/mcpTools.test.ts and
# mcpProcess.test.ts (API) and apps/web/e2e/mcpTools.spec.ts (browser), against the real API, the
# built-in local model and the test MCP server (apps/api/test/fixtures/mcp/testServer.ts), run as
# "fixture"; "broken" names a command that does not exist.

Feature: Tools from MCP servers
  The assistant can use the tools of the MCP servers the operator configured, under the same
  control as its built-in tools, and a server that is away never breaks a chat.

  Background:
    Given the API runs with MCP_SERVERS naming "fixture" and "broken"
    And a new guest visits the start page

  Scenario: The panel lists an MCP server's tools and an unavailable server
    When I open "Tools" in the composer
    Then a section "From the MCP server fixture" lists echo and slow, each on "Ask"
    And "broken" is named as unavailable, with no tools
    And opening the panel read the chat again, so servers that came or went since show as they are

  Scenario: An MCP tool asks, then runs
    When I send "hello mcp [[tool:mcp__fixture__echo]] [[words:30]]"
    Then an approval card asks "Allow running echo from fixture?" with the text "hello mcp"
    When I approve it
    Then the reply says 'The tool mcp__fixture__echo returned {"text":"echo: hello mcp"}.'

  Scenario: An allowed MCP tool runs without asking, and switched off mid-reply it is not offered again
    Given mcp__fixture__echo is set to "Allow"
    When I send "walk [[steps:3]] [[tool:mcp__fixture__echo]] [[delay:1500]] [[words:8]]"
    And the first call has returned
    And I set mcp__fixture__echo to "Off"
    Then the reply says "I have no tool named mcp__fixture__echo." and completes

  Scenario: A server that dies during a call
    Given a server that crashes in every slow call, its slow tool allowed
    When I send "wait [[tool:mcp__crashy__slow]] [[words:30]]"
    Then the tool call ends as an error, "The MCP server crashy went away during the call; the tool may or may not have run."
    And the server received the call once, never again after its restart
    And the reply completes

  Scenario: A server that cannot start
    When I send "time? [[tool:current_time]]"
    Then current_time runs and the reply completes
    And the API keeps serving and tries "broken" again later, and its log never holds the server's env

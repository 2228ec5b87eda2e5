# Agent chats (A1-A8), in Gherkin.
# Automated in apps/web/e2e/agentChats.spec.ts (browser; an API of its own with a workspace
# "projects", the real Claude Code binary and the project's scripted Messages API, whose replies
# quote the message), apps/api/test/agentChats.test.ts, agentWorkspaceOwners.test.ts and
# driverContract.test.ts (API), and apps/web/test/toolCalls.test.ts (the tool card's line).

Feature: Agent chats on a workspace
  A deployment that lists workspaces lets a person start a chat whose replies come from the Claude
  Code agent working in one of them, with the chat's queue, steers, approvals and versions.

  Background:
    Given the server offers the workspace "projects" with a directory "app" inside it
    And a signed-up person opens the start page

  Scenario: No workspace configured, nothing of agent chats shows
    Given the server offers no workspace
    Then the start page has no "New chat kind" picker
    And a chat made there has no agent badge and no agent icon in the sidebar

  Scenario: A directory outside the workspace is refused in words, and the text stays
    When I pick "Agent on projects"
    Then the model picker and the demo-model notice are gone
    When I enter a directory outside the workspace and send "hello agent [[words:3]]"
    Then the start page says "That directory is outside the workspace (symlinks count where they lead)."
    And the composer still holds "hello agent [[words:3]]"

  Scenario: An agent chat on a directory of the workspace shows where it works
    When I pick "Agent on projects", enter the directory "app" and send "hello agent [[words:3]]"
    Then the reply says "You said: "hello agent". word1 word2 word3"
    And the header's badge reads "Agent chat in app"
    And the sidebar marks the chat with the agent's icon

  Scenario: A Bash call is a tool card with its command and output
    Given an agent chat
    When I send "run it [[tool:Bash]] [[words:3]]"
    Then the reply has a card "Used Bash" beside "echo step 1"
    And opening it shows the result "step 1"
    And the reply says "· Claude Code agent"

  Scenario: A message sent while the agent works runs next
    Given an agent chat answering "a slow one [[words:40]] [[delay:100]]"
    When I send "next in line [[words:2]]"
    Then the Dock shows it waiting
    And it is answered after the first reply ends

  Scenario: A steer joins at the agent's next tool call
    Given an agent chat answering "three steps [[steps:3]] [[delay:1200]] [[words:0]]"
    And its first Bash card is shown
    When I steer with "and list the files"
    Then the transcript rolls: the steer is a message marked "Steered"
    And the reply goes on with "(steered) You added: "and list the files""

  Scenario: A write the agent asks for, approved and denied
    Given an agent chat on a directory of its own
    When I send "write it [[tool:Write]] [[words:3]]"
    Then an approval card names the file "written.txt" in that directory
    And a message sent meanwhile waits in the Dock
    When I approve
    Then the file is written, the reply goes on and the waiting message runs
    Given another agent chat asking the same
    When I deny
    Then the card says "You denied running Write", no file is written and the reply goes on

  Scenario: Stop & send interrupts the agent with the handoff
    Given an agent chat answering "a long story [[words:400]] [[delay:60]]"
    And "make it short [[words:2]]" waits in the Dock
    When I choose "Stop & send" on it
    Then the long reply is marked interrupted
    And the next reply starts with "(after interruption)"

  Scenario: An edit makes a version answered by the agent
    Given an agent chat with "first try [[words:2]]" answered
    When I edit it to "second try [[words:2]]"
    Then the message shows "2 / 2" and the agent answers "second try"
    And the previous version still shows the answer to "first try"

  Scenario: A restart of the API resumes the agent's session
    Given an agent chat with "remember the harbour [[words:2]]" answered
    When the API is killed and started again
    And I send "and before? [[history]] [[words:2]]"
    Then the reply says "History: "remember the harbour""
    And the Messages API was sent the earlier exchange by the resumed session (the product sends only the new message)

  Scenario: A workspace belongs to the first account that starts an agent chat on it
    Given I have started an agent chat on "projects"
    When another account opens the start page
    Then it is not offered "Agent on projects"
    And its request for an agent chat on "projects" is refused with 422 workspace_refused, reason "taken"
    When my account is deleted
    Then the other account is offered "Agent on projects"

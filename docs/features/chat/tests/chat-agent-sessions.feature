# Agent chats' sessions (A5-A8), in Gherkin: versions, approvals across a restart, tool settings,
# compaction and a hard kill. Automated in apps/api/test/agentChats.test.ts and
# claudeCodePolicy.test.ts against the real API and the real Claude Code binary, which talks to
# the scripted Messages API (apps/api/test/support/messagesApiServer.ts; its directives are the
# local model's: [[words:N]], [[tool:NAME]], [[steps:N]], [[history]], [[usage:N]]).

Feature: Agent chats keep their sessions through versions, approvals, settings and crashes
  An agent chat is a long-lived Claude Code session under the product's rules: an edit makes a
  version whose agent remembers what came before it and nothing after, a decision on a tool call
  is carried out even after the server restarted, the chat's tool settings are the agent's rules
  the moment they change, and a crash costs the turn it cut, never the session.

  Background:
    Given the API runs with AGENT_WORKSPACES naming a workspace
    And I am signed in with an agent chat on it

  Scenario: An edit forks the agent's session from before the message (A7)
    Given I sent "remember the lighthouse" and then "then the old question"
    When I edit "then the old question" to "the new question [[history]]"
    Then the reply says 'History: "remember the lighthouse"'
    And no request of the new version's agent holds "then the old question"
    When I edit "the new question" again to "a third question [[history]]"
    Then the reply says 'History: "remember the lighthouse"'
    When I switch back to the first version and send "and now? [[history]]"
    Then the reply says 'History: "remember the lighthouse" | "then the old question"'
    And it runs in the first version's own agent session

  Scenario: A decision on a tool call after the API restarted is carried out (A5)
    Given the agent asked to write a file, and another chat's agent asked the same
    When the API restarts
    And I approve the first request
    Then the agent writes the file, its output shows on the approved card, and the reply goes on
    When I deny the second request
    Then the card shows the call denied, the agent reads that it was denied, and no file is written

  Scenario: The chat's tool settings are the agent's rules (A5)
    Given Bash is set to "Off", Write to "Allow" and Read to "Ask"
    When I send "run it [[tool:Bash]]"
    Then the agent is not offered Bash, and its call of it does not run
    When I send "write it [[tool:Write]]"
    Then the file is written without an approval card
    When I send "read it [[tool:Read]]"
    Then an approval card asks for Read and the queue waits
    When I set Read to "Allow" and Bash to "Allow"
    Then the waiting call is approved and the reply completes
    And the next message's agent is offered Bash again, and it runs

  Scenario: A tool switched off while the agent works is refused at its next call (A5)
    When I send "walk [[steps:3]] [[delay:800]]"
    And the first Bash call has returned
    And I set Bash to "Off"
    Then the next Bash call is refused with "The person switched this tool off for this chat"
    And the reply completes

  Scenario: Settings that cannot be read end the agent's run (A5)
    Given Write is set to "Allow"
    When the agent calls Write while the chat's settings cannot be read
    Then the call does not run and the turn fails with "The agent stopped before it finished"

  Scenario: The agent compacting its conversation shows as the compaction notice (A6)
    Given the agent's last call reported a full window ("[[usage:990000]]")
    When I send "after it"
    Then the reply stream shows "compacting", then "done", before the reply's text
    And after the reply the transcript shows the compaction row before "after it", saying the agent keeps its own summary

  Scenario: A hard kill of the API mid agent turn (A8)
    Given I sent "remember the lantern"
    And a long reply is streaming
    When the API process is killed with SIGKILL
    And another API process starts
    Then the turn is settled "interrupted" with the text it had
    When I send "what came first? [[history]]"
    Then the reply says 'History: "remember the lantern"'
    And it runs in the same agent session

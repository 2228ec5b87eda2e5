# The tool approval flows of the chat, in Gherkin.
# Automated in apps/web/e2e/approvals.spec.ts and toolCalls.spec.ts (browser) and apps/api/test/approvals.test.ts,
# apps/api/test/approvalsRestart.test.ts (API), against the real API and the built-in local model.
# [[tool:NAME]] makes the local model call tool NAME first; for save_note the note's text is the
# message without its directives.

Feature: Tools with approvals
  The assistant can use tools. One that only reads runs at once; one that writes (save_note)
  waits for the person to approve or deny it, and the queue waits with it.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  Scenario: A tool that needs no approval runs at once
    When I send "what time is it [[tool:current_time]]"
    Then the reply says "The tool current_time returned" with the server's time
    And the call shows as one line, "Used current_time"
    And no approval is requested

  Scenario: Repeated calls are one line that opens to each call
    When I send "what time is it [[steps:6]] [[delay:0]] [[words:5]]"
    Then the reply shows one line, "Used current_time 6 times", and no raw results
    When I open it with the keyboard
    Then it shows six calls, each with its result
    When I press Enter again
    Then it closes

  Scenario: Approve, with a message queued behind the approval
    When I send "remember the milk [[tool:save_note]] [[words:12]]"
    Then a save_note card shows the arguments {"text": "remember the milk"} as text
    And it says "Waiting for your approval" with Approve and Deny
    And the reply offers no Copy or Regenerate
    When I send "after the note [[words:5]]"
    Then the Dock shows it, and its head says "Waits for the approval in the reply above."
    And the composer says "Waiting for an approval"
    And after a while it has still not run
    When I press Approve with the keyboard
    Then the card becomes "You approved saving the note", which opens to the result
    And the reply says "The tool save_note returned"
    And then the queued message runs
    And the approved reply has one row of actions, under its last part
    And Notes in the header lists "remember the milk"
    When I reload the page
    Then it still says "You approved saving the note"
    And the approved reply still has one row of actions

  Scenario: Deny in one tab while a second tab watches
    Given the thread waits for a save_note approval of "<img src=x onerror=alert(1)> secret"
    And the arguments show that text literally, with no image and no dialog
    And a second tab shows the same card
    When I queue "meanwhile [[words:5]]" from the second tab
    And I press Deny in the first tab
    Then both tabs say "You denied saving the note"
    And the reply says the tool was denied
    And then the queued message runs in both tabs
    And no note is saved
    And after a reload the denied reply has one row of actions

  Scenario: Stop while an approval waits
    Given the thread waits for a save_note approval
    And "still queued [[words:5]]" is queued
    When I press Stop
    Then the card says "Not run: the reply was stopped before you decided on saving the note"
    And the Queue Dock says the queue is paused
    When I press "Resume"
    Then the queued message runs next, with the handoff

  @api
  Scenario: A waiting approval survives a restart
    Given the thread waits for a save_note approval on API process A
    When process A is killed and process B starts on the same database
    Then after several sweeps the turn still waits for the approval
    When I approve through process B
    Then the turn resumes, finishes, and the note is saved

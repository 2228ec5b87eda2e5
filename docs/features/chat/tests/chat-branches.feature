# The Playwright flows of versions (branches), in Gherkin.
# Automated in apps/web/e2e/branches.spec.ts (@versions), against the production build, the real
# API and the built-in local model. The first scenario is the manual QA smoke of PRODUCT.md
# (docs/features/chat/qa-smoke.md has it step by step for a person).
# The local model's reply starts with: You said: "<message without directives>".
# Directives: [[words:N]] reply length, [[delay:MS]] pause before each word.
# "A long reply" is "[[words:1000]] [[delay:30]]": it runs until it is stopped.
# The busy message is the API's thread_busy text:
#   "Wait for the reply to finish, or stop it, before changing versions."

Feature: Versions of a conversation
  Editing a user message makes a new version of the conversation; the old one is kept.
  Version controls switch between versions, each showing only its own messages. Continuing
  appends to the shown version. The latest turn can be deleted from one version. The chosen
  version survives a reload. Versions change only while no reply runs; an edit into a new
  version also waits for the queue to empty.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  @versions @B1 @B2 @B3 @B4 @B5 @smoke
  Scenario: The manual QA smoke: edit, switch, continue and delete, reload
    # Step 1 (B1)
    When I send "Plan a picnic [[words:6]]"
    Then the reply contains "You said: "Plan a picnic""
    And no message has version controls
    When I edit the first message to "Plan a beach picnic [[words:6]]" and press Enter
    Then the first message is "Plan a beach picnic [[words:6]]"
    And the reply starts with "You said: "Plan a beach picnic""
    And the transcript has 1 user message and 1 reply
    And the version label of the first message is "2 / 2"
    When I go to the previous version
    Then the first message is "Plan a picnic [[words:6]]"
    And the transcript has 1 reply, with the same text as the original reply
    # Step 2 (B2)
    And the version label is "1 / 2"
    And no reply quotes "Plan a beach picnic"
    When I go to the next version
    Then the first message is "Plan a beach picnic [[words:6]]"
    And the transcript has 1 reply, with the same text as the beach reply
    And no reply quotes "Plan a picnic"
    When I go to the previous version and then to the next version
    Then each shows its own reply again
    # Step 3 (B3, B4)
    When I send "What should I bring? [[words:8]]"
    Then the transcript has 2 user messages
    And the last reply contains "You said: "What should I bring?""
    And the transcript has 2 replies
    And the version label of the first message is still "2 / 2"
    And the first message has no "Delete message" button
    When I delete the latest message and confirm
    Then the transcript has 1 user message and 1 reply
    And the transcript does not contain "What should I bring?"
    And the first message is "Plan a beach picnic [[words:6]]" with the beach reply
    And the version label is "2 / 2"
    When I go to the previous version
    Then the first message is "Plan a picnic [[words:6]]" with the original reply, and nothing else
    # Step 4 (B5)
    When I go to the next version
    And I reload the page
    Then the version label is "2 / 2"
    And the first message is "Plan a beach picnic [[words:6]]"
    And the transcript has 1 reply, with the same text as the beach reply

  @versions @thread_busy
  Scenario: Versions cannot change while a reply streams; a tab that missed it is refused
    Given I sent "Draft an email [[words:8]]" and its reply is finished
    And I edited the first message to "Draft a short email [[words:8]]" and its reply is finished
    And the version label is "2 / 2"
    When I send a long reply "a long one"
    Then the Stop button is shown
    And "Edit message" on the first and on the last message is disabled
    And "Previous version" is disabled
    And "Delete message" is disabled
    When I press Stop and the thread is idle
    Then "Edit message", "Previous version" and "Delete message" are enabled
    Given a second tab on the same thread that receives no thread events
    And the second tab shows 2 user messages and the label "2 / 2"
    When I send a long reply "another long one" in the first tab
    And in the second tab I edit the first message to "Draft a long email [[words:8]]" and press Enter
    Then the second tab's error banner shows the busy message
    And the editor still holds "Draft a long email [[words:8]]"
    When I press Escape in the second tab
    Then the editor closes
    And the first message is still "Draft a short email [[words:8]]"
    And the second tab still shows 2 user messages
    When I close the error banner
    And I press "Previous version" in the second tab
    Then the second tab's error banner shows the busy message
    And the version label is still "2 / 2"
    And the first message is still "Draft a short email [[words:8]]"

  @versions @B4
  Scenario: Deleting the edit that made a version removes that version and shows the one before
    Given I sent "Name a colour [[words:8]]" and its reply is finished
    When I edit the first message to "Name a fruit [[words:8]]" and press Enter
    Then the reply contains "You said: "Name a fruit""
    And the version label is "2 / 2"
    When I press "Delete message" on the first message
    And I press "Cancel" in the "Delete this message?" dialog
    Then the dialog closes
    And the first message is still "Name a fruit [[words:8]]"
    When I delete the latest message and confirm
    Then the first message is "Name a colour [[words:8]]"
    And the transcript has 1 user message and 1 reply, with the same text as the original reply
    And no message has version controls
    When I reload the page
    Then the first message is "Name a colour [[words:8]]"
    And no message has version controls

  @versions @B1
  Scenario: The inline editor: Escape and Cancel restore the message, Save needs text, Shift+Enter adds a line
    Given I sent "Keep me [[words:8]]" and its reply is finished
    When I start editing the first message
    Then the editor has focus and holds "Keep me [[words:8]]"
    And the composer is disabled
    When I type "changed" and press Escape
    Then the editor closes
    And the first message is still "Keep me [[words:8]]"
    And "Edit message" has focus
    And the composer is enabled
    When I start editing the first message again
    And I replace the text with "   "
    Then "Save" is disabled
    When I press Enter
    Then the editor is still open
    When I type "two", press Shift+Enter and type "lines"
    Then the editor holds "two" and "lines" on two lines
    When I press "Cancel"
    Then the editor closes
    And the first message is still "Keep me [[words:8]]"
    And no message has version controls
    And the transcript has 1 reply

  @versions @B2 @B5
  Scenario: Another tab follows an edit, a switch and a delete
    Given I sent "Pick a film [[words:8]]" and its reply is finished
    And the same thread is open in a second tab
    When I edit the first message to "Pick a book [[words:80]] [[delay:50]]" and press Enter
    Then the second tab shows the Stop button
    And the second tab's last reply contains "You said: "Pick a book""
    And the second tab shows 1 user message, "Pick a book [[words:80]] [[delay:50]]"
    And the second tab shows no reply quoting "Pick a film"
    When both tabs are idle
    Then the second tab's version label is "2 / 2"
    When I go to the previous version in the first tab
    Then the second tab's version label is "1 / 2"
    And the second tab's first message is "Pick a film [[words:8]]"
    When I go to the next version and delete the latest message in the first tab
    Then the second tab's first message is "Pick a film [[words:8]]"
    And the second tab shows no version controls

  # Automated in apps/web/e2e/regenerate.spec.ts.
  @versions @B1 @B2
  Scenario: Regenerate the latest reply makes a new version of its question
    Given I sent "first question [[words:4]]" and its reply is finished
    And I sent "second question [[words:6]]" and its reply is finished
    Then only the latest reply has a Regenerate button
    When I press Regenerate under the latest reply
    Then the page shows 2 user messages and 2 replies
    And the second user message is "second question [[words:6]]" with version label "2 / 2"
    And the last reply contains "You said: "second question""
    When I reload the page and go to the previous version of the second message
    Then the last reply is the one before regenerating

  @versions @B1
  Scenario: Regenerate waits for the queue
    Given I sent "[[words:3000]] [[delay:30]] a long one"
    And I queued "queued [[words:3]]" and paused the queue
    When I press Stop
    Then the latest reply's Regenerate button is disabled
    And its tooltip says "Send or delete the queued messages before editing a message."

# Per-chat tool settings (T1) that reach a running reply (T2), in Gherkin.
# Automated in apps/web/e2e/toolSettings.spec.ts (browser) and apps/api/test/toolSettings.test.ts
# (API), against the real API and the built-in local model. [[steps:N]] makes the local model call
# current_time once per step; [[delay:MS]] slows each step, so a change can land between steps.

Feature: Tools the person controls
  Each chat says, per tool, whether the assistant may not use it, must ask, or may just use it.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  Scenario: A tool switched off is not offered, and other tabs follow
    Given a chat open in two tabs
    When I open "Tools" in the composer and set current_time to "Off"
    Then the other tab's Tools button says "1 of 2 on"
    When I send "time? [[tool:current_time]] [[words:12]]"
    Then the reply says "I have no tool named current_time."

  Scenario: A change reaches the running reply at its next step
    When I send "walk [[steps:3]] [[delay:1500]] [[words:8]]"
    And the first call of current_time has returned
    And I set current_time to "Off"
    Then the call under way does not run, and the model is told the change applies from the next reply
    And the next step offers no current_time: the reply says "I have no tool named current_time."

  Scenario: A tool switched to ask asks at its next call
    When I send "walk [[steps:3]] [[delay:1500]] [[words:8]]"
    And the first call of current_time has returned
    And I set current_time to "Ask"
    Then the next call waits for my approval

  Scenario: A waiting approval follows the setting
    Given a reply waits for my approval of save_note
    When I set save_note to "Off"
    Then the request is denied and the reply answers without the note

  Scenario: Allow for this chat
    When I send "remember the milk [[tool:save_note]] [[words:12]]"
    And I choose "Allow for this chat" on the approval card
    Then the note is saved and save_note is set to "Allow"
    When I send "remember the bread [[tool:save_note]] [[words:12]]"
    Then the note is saved without a question

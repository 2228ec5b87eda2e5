# The model's context: usage, the meter and compaction, in Gherkin.
# Automated in apps/web/e2e/context.spec.ts (browser), apps/api/test/context.test.ts (API) and
# apps/web/test/threadPage/context.test.ts (page state), against the real API and the built-in
# local model (8,000-token window; `[[fail-summary]]` makes a summary fail).

Feature: The model's context
  Each reply records its token usage, a meter shows how full the next call's window is, and past
  a threshold the older messages are summarized for the model with a marker in the transcript.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  Scenario: A reply's usage is in its info
    When I send "hello [[words:20]]"
    Then the reply's info says how many tokens went in and out

  Scenario: The meter rises and turns amber
    When I send long messages "[[words:900]] [[delay:0]]" one after the other
    Then the context meter rises after each reply
    And it turns amber from 60% of the window

  Scenario: Compact now leaves a marker that opens to its summary
    Given the context meter is amber
    When I press "Compact now"
    Then a marker "Earlier messages summarized for the model" shows before a later message
    And the marker is a row of the transcript of its own, not inside that message
    And the meter is no longer amber
    And every message is still in the transcript
    When I press "Show summary"
    Then I read the summary the model gets
    And after a reload the marker is where it was

  Scenario: A long chat compacts once at the threshold
    Given a chat whose messages fill more than 80% of the window
    When I send "what do you remember? [[history]]"
    Then the turn shows "Compacting earlier messages…" before the reply
    And the reply lists the summary and only the recent messages
    And the next message does not compact again

  Scenario: A failed compaction falls back and says so
    Given a chat past the threshold whose older messages include "[[fail-summary]]"
    When I send a message
    Then the reply still comes, seeing only the newest messages that fit
    And the marker says the earlier messages could not be summarized

  Scenario: A version has its own window
    Given a compacted chat
    When I edit its first message into a new version
    Then the new version shows no marker and its model sees no summary

# Steering a running reply, in Gherkin.
# Automated in apps/web/e2e/steer.spec.ts (browser) and apps/api/test/steer.test.ts,
# apps/api/test/driver.test.ts and runner.test.ts (API), against the real API and the built-in
# local model (and, for the runner, a scripted driver).
# [[steps:N]] makes the local model call current_time N times ([[delay]] between steps).

Feature: Steer
  While a reply runs, a message can be queued (Enter) or steered (Steer, Ctrl+Enter): a steer
  joins the running reply at its next step, and the transcript rolls to show it in order.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  Scenario: Steer a multi-step reply with Ctrl+Enter, seen in two tabs
    When I send "plan a trip [[steps:8]] [[delay:1500]] [[words:10]]"
    And the first current_time card shows
    And I type "also book a hotel" and press Ctrl+Enter
    Then the Dock shows it with a "Steer" badge and "Joins the current reply at its next step"
    And then the Dock is empty
    When I open the chat in a second tab
    Then both tabs show my first message, the reply so far, "also book a hotel" and a reply after it
    And that last reply says "(steered) You added: "also book a hotel""
    And "also book a hotel" is labelled "Steered", my first message is not
    When the reply ends and I reload the second tab
    Then it shows the same four messages
    And "also book a hotel" is still labelled "Steered"

  Scenario: A steer sent during the last step runs next
    When I send "one step [[steps:1]] [[delay:40]] [[words:30]]" and its answer streams
    And I queue "an ordinary follow-up" and steer "shorter please"
    Then the Dock lists "shorter please" first
    When the reply ends
    Then "shorter please" is the head, queued, and its reply opens with "(steered)"

  Scenario: Stop & send on a waiting steer
    When I send "slow steps [[steps:3]] [[delay:2000]]" and steer "never mind, summarise"
    And I press Stop & send on the steer
    Then the reply stops as interrupted
    And the steer's reply opens with "(after interruption) (steered)"

  Scenario: A waiting steer is edited and deleted in the Dock until the reply takes it in (API)
    When I send "plan my day [[steps:1]] [[delay:3000]] [[words:2]]"
    And I steer "add lunch" and then "add a nap"
    And I edit the first steer to "add dinner" and delete the second
    Then the reply takes in "add dinner" only
    And the transcript shows "add dinner", and neither "add lunch" nor "add a nap"
    And editing the delivered steer is refused with 409 not_queued

  Scenario: Bad input
    When I send with mode "sideways"
    Then the answer is 400 bad_request and nothing is recorded

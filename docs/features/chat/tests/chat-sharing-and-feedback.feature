# The Playwright flows of sharing (H1) and feedback (H2), in Gherkin.
# Automated in apps/web/e2e/sharing.spec.ts and shareLinks.spec.ts (the phone's reply row and header in phone.spec.ts), against the production build, the real API and the
# built-in local model. The API side (sanitizing, immutability, refusals) is in
# apps/api/test/shares.test.ts and feedback.test.ts.
# The local model's reply starts with: You said: "<message without directives>".
# Directives: [[words:N]] reply length, [[delay:MS]] pause before each word.

Feature: Sharing a chat and rating replies
  A Share link shows a read-only snapshot of the chat as it was when the link was made, to anyone,
  without an account, until it is revoked. Thumbs up or down, with an optional comment on a
  thumbs down, rate a finished reply; the rating persists and follows other tabs.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  @sharing @H1
  Scenario: A link opens a read-only snapshot for anyone, copies, and stops working once revoked
    Given I sent "Share this recipe [[words:12]]" and its reply is finished
    When I open Share and choose "Create link"
    Then the dialog shows a link ending in "/share/<token>"
    And the clipboard holds the link
    When I choose "Copied" (Copy link) again
    Then the clipboard holds the link
    And "Live links" lists the link
    When I close the dialog
    And I send "A later secret message [[words:8]]" and its reply is finished
    And I open the link in a fresh browser with no cookies
    Then the page shows the title "Share this recipe"
    And it shows 2 messages: "Share this recipe [[words:12]]" and the same reply text as the chat
    And it does not show "A later secret message"
    And there is no composer, Queue Dock, message actions, thumbs or Share button
    And there is no text field at all
    And the page has a robots meta tag with "noindex"
    And no request went to /api/auth and the fresh browser has no cookies
    When I open Share and revoke the link
    Then "Live links" no longer lists it
    When the fresh browser reloads the link
    Then it shows "This link is no longer available"
    And no transcript is shown

  @sharing @H1 @api
  Scenario: A snapshot holds settled turns only
    Given a chat whose last message failed and waits at the head, with one more queued
    When I create a share link
    Then the snapshot holds the exchanges before it only: no failed attempt, no queued text
    And a snapshot taken while a reply runs, or waits for a tool approval, holds nothing of that reply

  @sharing @H1
  Scenario: Revoke asks first
    Given I sent "Share and then revoke [[words:5]]" and made a link
    When I choose "Revoke" on the link
    Then its row asks "Revoke this link? People who have it will not be able to open it any more."
    And the keyboard is on Cancel, and the link still opens
    When I press Enter
    Then the question is gone and the link is still listed and still opens
    When I choose "Revoke" and then "Revoke link"
    Then the link is no longer listed and no longer opens

  @sharing @H1
  Scenario Outline: A shared long chat opens at the top
    Given I sent "A long answer to share [[words:900]] [[delay:0]]" and made a link
    When a fresh browser of <size> opens the link
    Then the page is scrolled to the top and the title "A long answer to share" is in view

    Examples:
      | size     |
      | 1440x900 |
      | 390x844  |

  @sharing @H1 @D1
  Scenario Outline: A shared chat with documents keeps its chips whole and accessible
    Given I sent "summarise these [[words:6]]" with "report.pdf" (2 pages) and "plan.md" attached
    And I created a share link
    When a reader opens the link in a <size> window, <scheme>
    Then the PDF's chip says "PDF · 2 pages" and the Markdown file's its size
    And the PDF's chip is a link named "Open report.pdf PDF · 2 pages"
    And axe finds no serious or critical violation

    Examples:
      | size     | scheme |
      | 1440x900 | light  |
      | 1440x900 | dark   |
      | 390x844  | light  |
      | 390x844  | dark   |

  @sharing @H1
  Scenario: An unknown link shows that it is not available
    When I open "/share/no-such-token-at-all-here"
    Then it shows "This link is no longer available"

  @feedback @H2
  Scenario: Thumbs down with a comment persists across a reload and shows in a second tab
    Given I sent "Rate this answer [[words:6]]" and its reply is finished
    And the same chat is open in a second tab
    Then neither thumb of the reply is pressed
    When I choose "Good reply"
    Then "Good reply" is pressed
    When I choose "Bad reply"
    Then the comment field "What was wrong? (optional)" is focused
    When I type "Too short, and it repeats me." and choose "Save"
    Then "Bad reply" is pressed and the comment shows next to the thumbs
    And the second tab shows "Bad reply" pressed and the comment, without a reload
    When I reload the page
    Then "Bad reply" is still pressed and the comment still shows
    When I choose "Bad reply" again
    Then neither thumb is pressed and no comment shows
    And the second tab shows neither thumb pressed
    And no error banner is shown

  @feedback @H2
  Scenario: A reply that is still streaming has no thumbs yet
    When I send "Keep going [[words:400]] [[delay:30]]"
    And the reply has started
    Then the reply has no thumbs
    When I press Stop and the thread is idle
    Then the reply has thumbs

  @feedback @phone
  Scenario: On a phone a reply's buttons share one row and its words stay whole
    Given a 390x844 touch screen
    When I send "[[words:3]] first", then "[[words:12]] second", and the replies finish
    Then the last reply's Copy, Regenerate, New chat from here, Good reply and Bad reply are in one row
    And its time is on one line and its token counts say "· N in / N out tokens", inside the screen

  @feedback @phone
  Scenario: On a phone only the latest exchange shows its actions
    Given a 390x844 touch screen
    When I send "[[words:3]] first", then "[[words:3]] second", and the replies finish
    Then the last reply's Copy and the last message's Edit can be tapped
    And the first reply's Copy and the first message's Edit are out of sight, still read by a screen reader
    When I tap the first reply
    Then its Copy can be tapped
    When I tap it again
    Then its Copy is out of sight again
    When the keyboard's focus reaches the first message's Edit
    Then it shows

  @phone
  Scenario: On a phone a long title ends in an ellipsis and the header's buttons are a finger wide
    Given a 390x844 touch screen
    When I send "[[words:3]] Planning a very long weekend trip to the mountains with friends and family"
    Then the header's title is cut with an ellipsis
    And Open sidebar, Notes, Share and Chat menu are each 44 px, inside the screen
    When I open the sidebar
    Then every button and chat in it is 44 px tall, and its Close sidebar 44 px each way

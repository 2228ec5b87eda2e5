# The Playwright flows of taking a chat anywhere (P1-P4), in Gherkin.
# Automated in apps/web/e2e/portability.spec.ts, against the production build, the real API and the
# built-in local model. The API side (the format, refusals, all or nothing, independence of the
# copies) is in apps/api/test/exports.test.ts, imports.test.ts and forkAndContinue.test.ts.
# The local model's reply starts with: You said: "<message without directives>".
# Directives: [[words:N]] reply length.

Feature: Taking a chat anywhere
  A chat can be exported as Markdown (the version shown) or as a JSON file of every version,
  imported from such a file as a new chat, copied up to any message into a new chat, and a shared
  chat can be continued by its reader as a chat of their own.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  @portability @P1 @P2
  Scenario: Export as Markdown and JSON, and import the JSON as a new chat with every version
    Given I sent "Plan a picnic [[words:6]]" and its reply is finished
    And I sent "Add lemonade [[words:6]]" and its reply is finished
    And I edited "Add lemonade" into "Add iced tea [[words:6]]" and its reply is finished
    When I choose "Markdown: the version shown" in the chat menu
    Then a file ending in ".md" is saved
    And it starts with "# Plan a picnic" and holds "Add iced tea [[words:6]]" but not "Add lemonade"
    When I choose "JSON: every version, to import" in the chat menu
    Then a file ending in ".chat.json" is saved, holding 2 versions
    When I choose "Import chat" in the sidebar and pick that file
    Then a new chat opens with 2 messages of mine, the second "Add iced tea"
    And the last reply starts with "You said: \"Add iced tea\""
    When I go to the previous version of my second message
    Then it shows "Add lemonade"
    When I send "And sandwiches [[words:5]]"
    Then the last reply starts with "You said: \"And sandwiches\""

  @portability @P2
  Scenario: A file that is not an export is refused with the first problem named
    When I choose "Import chat" and pick a file holding {"format":"something-else"}
    Then a toast says "Could not import the chat"
    And it says "Invalid request body: format: Invalid input: expected \"queued-turn-chat.export\"."
    And I am still on the start page

  @portability @P2
  Scenario: An import larger than any message body goes through, image included
    When I import a valid export of 1 MB holding an image of 700 KB
    Then a new chat opens with "Where was this taken?" and the reply "By a lake, in the morning."
    And its image is served to me whole

  @portability @P3
  Scenario: "New chat from here" copies the chat up to that message, with a link back
    Given I sent "First question [[words:5]]" and its reply is finished
    And I sent "Second question [[words:5]]" and its reply is finished
    When I choose "New chat from here" under the first reply
    Then a new chat opens with 1 message of mine, "First question", and its reply
    And above it "Started from" links to the first chat
    When I send "A different second question [[words:12]]"
    Then the last reply starts with "You said: \"A different second question\""
    When I follow the "Started from" link
    Then the first chat shows its 2 messages of mine, the second "Second question"

  @portability @P3
  Scenario: "New chat from here" on a message of mine answers it (API, forkAndContinue.test.ts)
    Given I sent "look at this chart [[words:6]]" with an image, and more after it
    When I choose "New chat from here" under "look at this chart"
    Then the new chat ends with "look at this chart" and its image
    And a reply to it starts on the server, with no page open, and says it sees the image
    And the first chat is unchanged

  @portability @P4
  Scenario: A reader of a shared link continues the chat as their own; the owner's chat is unchanged
    Given I sent "Recipe for pancakes [[words:8]]" and its reply is finished
    And I made a share link
    When a fresh browser with no cookies opens the link and chooses "Continue this chat"
    Then a new chat of theirs opens with "Recipe for pancakes" and its reply
    When they send "Without eggs [[words:5]]"
    Then their last reply starts with "You said: \"Without eggs\""
    When I reload my chat
    Then it still has 1 message of mine and no "Without eggs"

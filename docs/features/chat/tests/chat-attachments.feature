# The Playwright flows of images in chat (issue 16), in Gherkin.
# Automated in apps/web/e2e/attachments.spec.ts, against the production build, the real API and
# the built-in local model. The API side (bytes sniffing, bounds, references in memory, the
# model's window, serving, shares, cleanup) is in apps/api/test/attachments.test.ts,
# attachmentContext.test.ts and uploadBounds.test.ts.
# The local model's reply starts with what it saw: I see <n> image(s): <kind> <width>x<height>.
# Directives: [[words:N]] reply length, [[delay:MS]] pause before each word.

Feature: Images in chat
  A person attaches images by button, paste or drop; they upload at once, queue with their
  message, show in the transcript, and load lazily when the chat is opened again. History holds
  references to the images, never their bytes.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  @attachments
  Scenario: A pasted image queues with its message and loads lazily after a reload
    Given I sent "[[words:250]] [[delay:40]] first" and its reply is streaming
    When I paste a 64x48 PNG into the message box
    Then the composer shows its thumbnail, uploaded
    When I send "what is in this picture? [[words:2500]] [[delay:0]]"
    Then the Dock shows the message with the image's thumbnail
    And the composer shows no thumbnail
    When the first reply ends
    Then the transcript shows my second message with the image
    And the reply says "I see 1 image: png 64x48."
    When I reload the page
    Then the image is not fetched while it is out of view
    When I scroll it into view
    Then it is fetched and shown
    When I click it
    Then it opens larger

  @attachments
  Scenario: A file that is not an image is refused with a clear error
    Given I sent "[[words:3]] hello" and its reply is finished
    When I attach a shell script named "notes.png"
    Then the composer says "Only PNG, JPEG, WebP and GIF images can be attached."
    And its thumbnail is marked as refused

  Scenario: An upload that cannot be one image is refused as it arrives, and its refusal can be read
    # Automated in apps/api/test/uploadBounds.test.ts and attachments.test.ts.
    Given a chat
    When a 30 MB image is uploaded with fetch
    Then the answer is 413 too_large, read by fetch (the rest of the body was read and thrown away)
    When a 9 MB form of 170,000 fields and one image is uploaded
    Then the answer is 400 long before the body is sent
    When a PNG whose header says 2147483647 x 2147483647 is uploaded
    Then the answer is 413 too_large and nothing is stored

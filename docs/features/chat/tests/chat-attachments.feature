# The Playwright flows of images in chat (issue 16), in Gherkin.
# Automated in apps/web/e2e/attachments.spec.ts, firstMessage.spec.ts and imageViewer.spec.ts, against the production build, the real API and
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
  Scenario: Dragging a file over the composer's parts keeps one drop highlight
    When I drag a file onto the composer
    Then the composer shows its drop highlight
    When the pointer moves onto the message box, then onto the attach button
    Then the drop highlight stays on throughout
    When the pointer leaves the composer
    Then the drop highlight is gone
    And nothing is attached

  @attachments
  Scenario: A file that is not an image is refused with a clear error
    Given I sent "[[words:3]] hello" and its reply is finished
    When I attach a shell script named "notes.png"
    Then the composer says "Only PNG, JPEG, WebP and GIF images can be attached."
    And its thumbnail is marked as refused

  @attachments
  Scenario: An image attached on the start page goes with the first message
    When I attach a 64x48 PNG on the start page
    Then the composer shows its thumbnail, uploaded
    And the sidebar lists no chat
    When I send "what is this? [[words:20]]"
    Then the chat opens with my message and its image
    And the reply says "I see 1 image: png 64x48."

  @attachments
  Scenario: The first message's text and images survive a reload until sent
    When I attach a 32x32 PNG on the start page
    And I type "still here after a reload [[words:20]]"
    And I reload the page
    Then the composer still holds the text and the uploaded image
    When I press Enter
    Then the reply says "I see 1 image: png 32x32."

  @attachments
  Scenario: A first message left unsent does not make chats
    Given I have a chat
    When I attach an image on the start page
    And I open my chat and come back with "New chat"
    Then the start page still holds the image
    And the sidebar lists only my chat
    When I remove the image and attach another
    Then no new chat is stored

  @attachments
  Scenario Outline: The viewer fits the screen and steps through a message's images
    Given the screen is <size>
    And a message of mine carries a 2000x1000, a 300x1200 and a 64x48 PNG
    When I click its first image
    Then the viewer shows it whole on the screen, "1 / 3"
    And "Open original" opens it in a new tab
    When I press the right arrow key
    Then it shows the second image, "2 / 3"
    When I press "Next image"
    Then it shows "3 / 3" and "Next image" is disabled
    When I press Escape
    Then the viewer closes

    Examples:
      | size     |
      | 1440x900 |
      | 390x844  |

  @attachments
  Scenario: A guest who signs up before sending keeps the first message's image
    When I attach a 24x24 PNG on the start page
    And I create an account
    Then the start page still holds the image
    When I send "kept across the sign-up [[words:20]]"
    Then the reply says "I see 1 image: png 24x24."
    When I attach another image on the start page and sign out
    And a new guest opens the start page in this browser
    Then the composer holds no image

  Scenario: An upload that cannot be one image is refused as it arrives, and its refusal can be read
    # Automated in apps/api/test/uploadBounds.test.ts and attachments.test.ts.
    Given a chat
    When a 30 MB image is uploaded with fetch
    Then the answer is 413 too_large, read by fetch (the rest of the body was read and thrown away)
    When a 9 MB form of 170,000 fields and one image is uploaded
    Then the answer is 400 long before the body is sent
    When a PNG whose header says 2147483647 x 2147483647 is uploaded
    Then the answer is 413 too_large and nothing is stored

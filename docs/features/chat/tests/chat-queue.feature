# The Playwright flows of the chat, in Gherkin.
# Automated in apps/web/e2e/chat.spec.ts (@foundation), apps/web/e2e/queue.spec.ts (@queue) and
# apps/web/e2e/queueOrder.spec.ts (@order), apps/web/e2e/backgroundDrain.spec.ts (@Q15),
# against the production build, the real API and the built-in local model.
# The local model's reply starts with: You said: "<message without directives>".
# Directives: [[words:N]] reply length, [[delay:MS]] pause before each word, [[fail]] fail before any text,
# [[fail-after:N]] fail after N words.
# The Playwright run starts the API with LOCAL_MODEL_DELAY_MS=30.
# Scenarios tagged @api are automated against the API alone (apps/api/test/failedHeads.test.ts;
# @L1: apps/api/test/overload.test.ts, the page's part in apps/web/test/threadPage/overload.test.ts
# and apps/web/test/overloadRetry.test.ts; @Q15 @api: apps/api/test/backgroundDrain.test.ts,
# drainCap.test.ts, drainInstances.test.ts, drainFaults.test.ts).

Feature: Chat with queued turns and interrupts
  A person can keep sending messages while the assistant answers. Follow-ups wait in a
  Queue Dock above the composer, where they can be edited, deleted, reordered or merged. Stop interrupts the
  server. Stop & send interrupts and sends the queue head as the new priority. The first reply
  after any interrupt gets a hidden handoff. A failed message waits at the head until it is
  retried, edited or deleted. Any open, connected page drains the queue; a chat set to "Keep
  going when I leave" is drained by the server with no page open.

  Background:
    Given a new guest visits the start page
    And the page is interactive

  # --- Foundation -----------------------------------------------------------------------

  @foundation
  Scenario: A reply streams, and the transcript survives a reload
    When I send "[[words:60]] [[delay:50]] hello"
    Then I am on the new thread's page
    And the reply shows "You said: "hello"" while it is still being written
    And the reply keeps growing while the Stop button is shown
    When the reply is finished
    And I reload the page
    Then I see 1 user message "[[words:60]] [[delay:50]] hello"
    And I see 1 reply, with the same text as before the reload

  @foundation
  Scenario: HTML in a message is shown as text and never runs
    When I send "<script>alert(1)</script> and <img src=x onerror=alert(1)>"
    Then my message shows that text literally
    And the reply quotes "<script>alert(1)</script>" and "<img src=x onerror=alert(1)>" as text
    And the transcript contains no img or script element
    And no dialog is opened

  @foundation
  Scenario: The sidebar lists the new thread
    When I send "[[words:5]] sidebar check"
    Then the "Chats" navigation has a link to the thread, marked as the current page

  # --- Queue ----------------------------------------------------------------------------

  @queue @Q3 @Q7 @Q10
  Scenario: A message sent while a reply streams is queued, then runs next
    Given I sent "[[words:120]] [[delay:30]] first" and its reply is streaming
    When I send "second"
    Then the Queue Dock shows "second" with the counter "1 / 5"
    And the transcript still has 1 user message
    When the first reply ends
    Then the transcript has 2 user messages, the last one "second"
    And the last reply contains "You said: "second""
    And the Queue Dock is hidden

  @queue @Q8
  Scenario: A queued message is edited in place and deleted; the composer waits during an edit
    Given I sent "[[words:400]] [[delay:30]] long one" and its reply is streaming
    And I queued "alpha" and then "beta"
    When I start editing item 1 of the Queue Dock
    Then the editor has focus
    And the composer is disabled
    When I type "something else" and press Escape
    Then the editor closes
    And the composer is enabled
    And the Queue Dock shows "alpha", "beta"
    When I edit item 1 to "alpha, edited" and press Enter
    Then the Queue Dock shows "alpha, edited", "beta"
    When I delete item 2
    Then the Queue Dock shows "alpha, edited"
    When I reload the page
    Then the Queue Dock shows "alpha, edited"
    And the transcript has 1 user message

  @queue @Q4
  Scenario: The queue holds at most five
    Given I sent "[[words:400]] [[delay:30]] cap" and its reply is streaming
    When I queue "queued 1", "queued 2", "queued 3", "queued 4" and "queued 5"
    Then the Queue Dock counter shows "5 / 5"
    And the composer says "Queue is full"
    When I type "one too many" and press Enter
    Then the composer still holds "one too many"
    And the Queue Dock shows "queued 1" to "queued 5" only

  @queue @S1 @S2 @S3 @S5
  Scenario: Stop with items waiting keeps them and pauses the queue; Resume runs the head with the handoff
    Given I sent "[[words:400]] [[delay:30]] stop me" and its reply shows "You said: "stop me""
    And I queued "after the stop"
    When I press Stop
    Then the first reply is marked "Interrupted", in view above the Queue Dock
    And the Queue Dock says it is paused, with a "Resume" button
    And item 1 says "Paused: resume the queue to run it."
    And the composer hint says "Enter adds to the paused queue · Shift+Enter for a new line"
    And nothing runs
    When I press "Resume"
    Then the transcript has 2 user messages, the last one "after the stop"
    And the second reply contains "You said: "after the stop""
    And the second reply starts with "(after interruption)"
    And the Queue Dock is hidden

  @queue @S3
  Scenario: Deleting the last item of a paused queue ends the pause; Undo brings the item back paused
    Given I sent "[[words:3000]] [[delay:30]] a long one" and queued "waits"
    And I pressed Stop, so the Queue Dock says it is paused
    When I delete "waits"
    Then the Queue Dock is hidden and the composer hint says "Enter sends · Shift+Enter for a new line"
    When I press "Undo" on the toast
    Then the Queue Dock shows "waits" and says it is paused, and nothing runs
    When I delete "waits" again and send "runs at once"
    Then its reply streams at once and the Queue Dock stays hidden

  @queue @phone
  Scenario: On a phone a deleted item's Undo shows just above the message box
    Given a 390x844 touch screen, a reply streaming and "first queued", "second queued" in the Queue Dock
    Then the "Keep going when I leave" switch answers a tap 21 px from its middle, each way
    When I delete "first queued"
    Then a toast offers "Undo", 44 px each way, ending at most 24 px above the message box and covering none of it
    When I press "Undo" on the toast
    Then the Queue Dock shows "first queued", "second queued"

  @queue @S1
  Scenario: Stop pressed right after Send stops that reply
    Given I sent "[[words:4]] an earlier exchange" and its reply is finished
    And the server answers sends only after 700 ms
    When I send "[[words:400]] [[delay:30]] stop me at once" and press Stop at once
    Then the page is idle within 8 seconds
    And the server has no running turn
    And after a reload the transcript has 2 user messages

  @queue @S4 @S5
  Scenario: Stop & send interrupts the reply, and the head answers as the new priority
    Given I sent "[[words:400]] [[delay:30]] tell me a long story" and its reply is streaming
    And I queued "actually, make it short"
    When I press "Stop & send" on the head of the Queue Dock
    Then the transcript has 2 user messages, the last one "actually, make it short"
    And the second reply starts with "(after interruption)"
    And the first reply is marked "Interrupted"
    And the Queue Dock is hidden
    When the reply is finished and I reload the page
    Then the first reply is still marked "Interrupted"
    And the second reply is not marked "Interrupted"

  @queue @Q11
  Scenario: A failed head stays at the head and blocks the queue until it is edited
    Given I sent "[[words:150]] [[delay:30]] before the failure" and its reply is streaming
    And I queued "[[fail]] this one breaks" and then "waits behind it"
    When the first reply ends and the head runs and fails
    Then item 1 of the Queue Dock shows its error and has the status "failed"
    And item 1 says "Blocked: this message failed. Retry, edit or remove it to continue."
    And item 1 has a "Retry" button and no "Send now" button
    And the Stop button is hidden
    And the Queue Dock shows "[[fail]] this one breaks", "waits behind it"
    And my last message in the transcript is marked "Failed"
    And the page shows "The model call failed. Retry it, or edit or delete your message." once, in the Queue Dock
    When I edit item 1 to "fixed now"
    Then the transcript has 1 user message "fixed now" with a reply containing "You said: "fixed now""
    And then a reply containing "You said: "waits behind it""
    And the Queue Dock is hidden
    And the transcript has no message "this one breaks"

  @queue @Q11 @api
  Scenario: A steer the failed reply never took in waits behind the failed head
    Given I sent "about to break [[words:40]] [[delay:300]] [[fail-after:5]]" and its reply is streaming
    And I steered "a steer that came too late" and queued "one more"
    When the reply fails after 5 words
    Then the queue lists the failed head first, then "a steer that came too late", then "one more"
    And a claim of the head is refused with 409 not_eligible, reason head_failed

  @queue @S4 @api
  Scenario: A Stop & send that cannot run the head changes nothing
    Given a reply is streaming and a failed message waits at the head of the queue
    When I press "Stop & send" on the failed head
    Then the answer is 409 not_eligible, reason head_failed
    And the reply keeps streaming and completes

  @queue @S4 @api
  Scenario: A Stop & send whose message left the queue meanwhile stops nothing
    Given a reply is streaming and "one" then "two" wait in the queue
    And I press "Stop & send" on "one" in one tab while another tab deletes "one"
    When the delete reaches the thread first
    Then the Stop & send is answered 409 not_queued
    And the reply keeps streaming, the queue is not paused, and "two" waits alone

  @queue @S4 @F4 @api
  Scenario: A Stop & send that stopped the reply but lost the database says so
    Given a reply is streaming and "the priority now" waits at the head of the queue
    When I press "Stop & send" on the head
    And the database goes away after the reply was stopped, for longer than the interrupt waits
    Then the answer is 503 unavailable with replyStopped and queuePaused
    And the page shows the reply stopped and "the priority now" waiting first in a paused Dock, with Send now
    When the database is back
    Then the reply is interrupted with its partial text, "the priority now" is queued first, the queue is paused
    When I press "Send now" on the head
    Then it runs as the new priority and the queue is no longer paused

  @queue @Q11
  Scenario: A head that fails after some text shows its error after a reload; Retry runs it again
    Given I sent "[[words:60]] [[delay:30]] first" and its reply is streaming
    And I queued "half an answer [[fail-after:3]]" and then "waits behind it"
    When the head runs and fails after 3 words
    And I reload the page
    Then item 1 of the Queue Dock has the status "failed"
    And the second reply has 3 words and is marked "Failed"
    And item 1 of the Queue Dock shows "Failed: The model call failed. …"
    When I press "Retry" on the head of the Queue Dock
    Then the reply is written again and fails again
    And the transcript has 1 user message "half an answer" and 2 replies
    When I press "Remove and continue" on item 1
    Then a reply containing "You said: "waits behind it"" follows
    And the transcript has no message "half an answer"
    And the Queue Dock is hidden

  @queue @Q10
  Scenario: With no viewer attached the queue waits; opening the chat again drains it
    Given I sent "[[words:150]] [[delay:30]] nobody watching" and its reply is streaming
    And I queued "waiting for a viewer"
    When I leave for the start page
    And the reply ends on the server
    Then the queue still holds "waiting for a viewer"
    When I open the thread again
    Then the second reply contains "You said: "waiting for a viewer""
    And it does not start with "(after interruption)"
    And the Queue Dock is hidden

  @queue @Q10
  Scenario: A reload with queued items and nothing running starts the head by itself
    Given I sent "[[words:600]] [[delay:30]] a long one" and its reply is streaming
    And I queued "first in line" and then "second in line"
    When I leave the page and the reply is stopped through the API
    And the queue it paused is resumed through the API
    And I open the thread again
    Then replies to "first in line" and then "second in line" follow
    And the Queue Dock is hidden

  @queue @Q10
  Scenario: The Dock says why the head waits; the composer says Enter adds to the queue
    Given I sent "[[words:400]] [[delay:30]] status lines" and its reply is streaming
    Then the composer hint says "Enter adds to the queue · Ctrl+Enter steers the current reply · Shift+Enter for a new line"
    When I queue "one" and then "two"
    Then item 1 says "Runs after the current reply."
    And item 2 says "Position 2 of 2" to screen readers and "Runs after the current reply and 1 more."
    When I leave the page and the reply is stopped through the API
    And the queue it paused is resumed through the API
    And I open the thread again with its events stream failing
    Then item 1 says "Waiting for this page to reconnect."
    And nothing runs
    When the events stream can connect again
    Then replies to "one" and then "two" follow
    And the composer hint says "Enter sends · Shift+Enter for a new line"

  @queue
  Scenario: A reload in the middle of a reply attaches to it and keeps streaming
    Given I sent "[[words:8]] an earlier exchange" and its reply is finished
    And I sent "[[words:150]] [[delay:40]] keep going" and its reply shows "You said: "keep going""
    When I reload the page
    Then the Stop button is shown
    And the last reply contains "You said: "keep going"" and keeps growing
    And the transcript has 2 user messages, the first one "an earlier exchange"
    When the reply is finished
    Then the transcript has 2 user messages and 2 replies
    And after another reload the last reply has the same text

  @queue
  Scenario: Two tabs on one thread show the same stream and the same Queue Dock
    Given I sent "[[words:400]] [[delay:30]] shared" and its reply is streaming
    When I open the same thread in a second tab
    Then the second tab shows the reply "You said: "shared"" streaming, with a Stop button
    When I queue "from tab one" in the first tab
    Then the second tab's Queue Dock shows "from tab one"
    When I queue "from tab two" in the second tab
    Then the first tab's Queue Dock shows "from tab one", "from tab two"
    When I delete item 2 in the second tab
    Then the first tab's Queue Dock shows "from tab one"
    When I press "Stop & send" on the head in the second tab
    Then the first tab has 2 user messages
    And the first tab's second reply contains "(after interruption)"
    And both tabs become idle with empty Queue Docks
    And both tabs show the same second reply

  @queue @S3
  Scenario: A queue resumed in another tab runs there, and this tab shows every reply, on a busy machine too
    Given I sent "[[words:3000]] [[delay:30]] long" and queued "[[words:12]] first queued" and "[[words:12]] second queued"
    And the same thread is open in a second tab
    When I pause the queue in the first tab and press Stop
    Then nothing runs, in either tab
    When I press "Resume" in the second tab
    Then the first tab shows a reply to "first queued", then one to "second queued"
    # The second reply can settle while the first tab still follows the first one's stream (its
    # answer late on a busy machine): the thread is read again once that stream ends.

  @queue @S3
  Scenario: A paused queue says so on every item and in the composer, even while a reply runs
    Given I sent "[[words:3000]] [[delay:30]] still talking" and its reply is streaming
    And I queued "one" and then "two"
    When I press "Pause the queue"
    Then item 1 says "Paused: resume the queue to run it."
    And item 2 says "Paused: after 1 more once resumed."
    And the composer hint says "Enter adds to the paused queue · Ctrl+Enter steers the current reply · Shift+Enter for a new line"

  @queue @Q8
  Scenario: A keyboard delete keeps the keyboard in the Dock; Undo brings the message back to its place
    Given I sent "[[words:3000]] [[delay:30]] keep going" and its reply is streaming
    And I queued "with a picture" with an image, then "two" and "three"
    When I press Enter on the Delete button of item 1
    Then the Queue Dock shows "two", "three"
    And the Delete button of item 1 has the keyboard
    When I press "Undo" on the toast
    Then the Queue Dock shows "with a picture", "two", "three", the first with its image
    When I press Enter on the Delete button of item 3
    Then the composer has the keyboard

  @queue @S2
  Scenario: After Stop the transcript ends at its latest message above the Dock
    Given I sent "[[words:600]] [[delay:15]] a long story" and its reply is streaming
    And I queued two messages and paused the queue
    When I press Stop
    Then the "Interrupted" mark is above the Queue Dock and no "Latest" button shows
    When I scroll up
    Then a "Latest" button shows below the transcript, over no text
    When I press it
    Then the "Interrupted" mark is in view again

  # --- Order and merge (Q9, Q13, Q14) -----------------------------------------------------

  @order @Q13
  Scenario: Drag and Alt+Up/Down reorder the queue, and the other tab follows
    Given I sent "[[words:3000]] [[delay:30]] a long reply" and its reply is streaming
    And I queued "one", "two", "three" and "four"
    And the same chat is open in a second tab
    When I open the menu of item 2 and press Esc
    Then the menu closes, the reply goes on and the queue is not paused
    When I drag item 4 by its grip above item 1
    Then both tabs' Queue Docks show "four", "one", "two", "three"
    And a toast says "Message moved" with "Undo"
    When I focus item 2 and press Alt+Down
    Then both tabs' Queue Docks show "four", "two", "one", "three"
    And item 3 has the keyboard and screen readers hear "Moved to position 3 of 4."
    When I press Alt+Up
    Then both tabs' Queue Docks show "four", "one", "two", "three"

  @order @Q13 @Q14
  Scenario: Run next and a merge, each undone from its toast
    Given I sent "[[words:3000]] [[delay:30]] a long reply" and its reply is streaming
    And I queued "one", "two", "three" and "four"
    And the same chat is open in a second tab
    When I choose "Run next" in the menu of item 3
    Then both tabs' Queue Docks show "three", "one", "two", "four" and item 1 says "Runs next"
    When I press "Undo" on the toast
    Then both tabs' Queue Docks show "one", "two", "three", "four"
    When I choose "Merge with other messages…" in the menu of item 2, tick item 4 and press "Merge into one message"
    Then both tabs' Queue Docks show "one", "two" and "four" as one message with a blank line between, "three"
    When I press "Undo" on the toast
    Then both tabs' Queue Docks show "one", "two", "three", "four"

  @order @Q9
  Scenario: Stop & send this runs an item now with the handoff, the rest after it in their order
    Given I sent "[[words:3000]] [[delay:30]] a long reply" and its reply is streaming
    And I queued "one", "two", "three" and "four"
    And the same chat is open in a second tab
    When I choose "Stop & send this" in the menu of item 3
    Then the reply to "three" contains "(after interruption)"
    And both tabs end idle with empty Queue Docks
    And after a reload the replies are to "a long reply", "three", "one", "two", "four", in that order

  @order @Q11 @Q13
  Scenario: A failed head keeps the front
    Given I sent "[[words:3000]] [[delay:30]] runs" and its reply is streaming
    And I queued "breaks [[fail]]", "first" and "second"
    When I press "Stop & send" on item 1
    Then item 1 has failed and has no grip and no menu
    And the menu of item 3 offers "Run next" but not "Move down"
    When I choose "Run next" in the menu of item 3
    Then the Queue Dock shows "breaks [[fail]]", "second", "first"
    When I drag item 3 by its grip above item 1
    Then the Queue Dock shows "breaks [[fail]]", "first", "second"

  @a11y
  Scenario: The live region reads the first sentence of a finished reply
    Given I sent "[[words:40]] [[delay:20]] good morning"
    When its reply is finished
    Then the polite live region says "Reply finished: You said: "good morning"."

  @api @L1
  Scenario: A send past what the server can start is refused at once and goes out later by itself
    Given the API instance is starting as many sends as it may, and its short line is full
    When I send "one more"
    Then the answer is 503 overloaded with Retry-After, at once
    And no turn was recorded for it
    And the page says the server is busy and the message goes out as soon as it can
    When a start slot is free and the page sends the same request again after Retry-After
    Then "one more" is accepted once
    And Stop, Stop & send and reading the thread worked all along

  @queue @Q15
  Scenario: With "Keep going when I leave" on, the queue runs with the page closed
    Given I sent "first [[words:5]]" and its reply finished
    And I sent "second [[words:200]] [[delay:30]]" and its reply is streaming
    And I queued "third" and then "fourth"
    When I turn on "Keep going when I leave" in the Queue Dock
    Then the browser is asked for notification permission, and was not asked before
    When I close the page
    Then the server answers "second", "third" and "fourth" in order with no page open
    When I open the chat again
    Then the transcript has 4 user messages and a reply to "fourth"
    And "While you were away" shows above the reply to "second"

  @queue @Q15
  Scenario: A hidden tab counts finished replies and notifies
    Given notifications are allowed
    And I sent "long [[words:200]] [[delay:30]]" and its reply is streaming
    And I queued "short one" and turned on "Keep going when I leave"
    When the tab is hidden
    Then its title becomes "(2) <chat title>" once both replies finished
    And notifications said "Reply finished", "Reply finished" and "Queue finished"
    When the tab is shown again
    Then its title has no count
    And "While you were away" shows above the reply to "long"
    When I send "I am back"
    Then the divider is gone

  @queue @Q15
  Scenario: The switch is in the chat's menu mid-reply, and the chat reopens at "While you were away"
    Given I sent "first [[words:5]]" and its reply finished
    And I sent "second [[words:400]] [[delay:30]]" and its reply is streaming, with nothing queued
    When I turn on "Keep going when I leave" in the chat's menu
    Then the browser is asked for notification permission
    When I queue "third [[words:400]] [[delay:30]]" and close the page
    And the server answers both with no page open
    And I open the chat again
    Then "While you were away" is on the screen and the "Latest" button shows
    When I press "Latest"
    Then the last reply is on the screen

  @queue @Q15 @H3
  Scenario: A hidden tab says a reply waits for an approval
    Given the chat asks before the tool "save_note"
    And I sent "[[tool:save_note]] note milk" and the tab is hidden
    When the reply asks for approval to run "save_note"
    Then the tab's title becomes "Approval needed · <chat title>"
    And one notification says the reply waits for me to allow or deny save_note
    When another tab approves it
    Then the title is the chat's title again

  @queue @Q15
  Scenario: A hidden tab says the chat is blocked
    Given I sent "long [[words:400]] [[delay:30]]" and its reply is streaming
    And I queued "[[fail]] this one breaks" and "waits behind it"
    When the tab is hidden
    Then its title becomes "Blocked · <chat title>" once the failed message holds the queue
    When the tab is shown again
    Then its title is the chat's title

  @queue @Q15
  Scenario: With the switch off, closing the page leaves the queue waiting
    Given I sent "first [[words:200]] [[delay:30]]" and its reply is streaming
    And I queued "waits for me"
    When I close the page and the reply ends on the server
    Then the queue still holds "waits for me"
    When I open the chat again
    Then a reply to "waits for me" follows

  @api @Q15
  Scenario: The server's drain follows the viewer's rules
    Given a chat with "Keep going when I leave" on and a reply running with no page open
    When I queue a message that fails and one after it
    Then the failed message stays first and the one after it waits
    When I delete the failed message
    Then the one after it runs
    Given a reply running with two messages queued
    When I press Stop
    Then the queue is paused and nothing runs with no page open
    When I resume the queue through the API
    Then the next message runs with the handoff and the queue empties
    Given a reply waiting for a tool approval with a message queued
    Then nothing runs until I approve it, then the queued message runs

  @api @Q15
  Scenario: Two API instances, one killed mid-drain
    Given two API instances on one database and a chat with "Keep going when I leave" on
    And a drained reply running on one of them with two messages queued behind it
    When that instance is killed with SIGKILL
    Then the other settles the cut reply as interrupted once its lease ran out
    And it runs the next message with the handoff and then the last one
    And no message was started twice

# Nothing accepted is lost, whatever fails, in Gherkin.
# Automated in apps/api/test/durability.test.ts (one scenario per loss the fault suite found),
# apps/api/test/faults.test.ts (the fault-injection suite: seeded outages and hard kills at
# points of a reply, a settle, a steer and an approval, one invariant checked after each),
# recovery.test.ts, silentRun.test.ts, steer.test.ts, versionFaults.test.ts and queueFaults.test.ts, against a real API process, a PostgreSQL server the
# test stops and starts, and the built-in local model.

Feature: Durability under faults
  Every send the API accepted is in the transcript or in the queue, and what a person saw of a
  reply is stored: all of it when the API lives through the fault, on a hard kill all but the text
  of the one checkpoint write in flight (never a finished step). No turn is called done while its
  messages are missing, and no read shows an accepted message nowhere.

  Background:
    Given a guest with a new chat on an API whose database the test can stop

  Scenario: A reply that ends while the database is away is kept whole
    When I send "long [[words:200]] [[delay:100]]" and 30 words have streamed
    And the database stops for 60 seconds
    Then the reply streams to its last word
    And it finishes only once the database is back and the reply is stored
    And the turn is completed with my message and the whole reply in the transcript

  Scenario: A steer taken in just before a hard kill is kept
    When I send "plan a trip [[steps:6]] [[delay:1500]]" and the first tool result shows
    And I steer "and include Rome" and the reply takes it in
    And the API is killed 0.7 seconds later
    Then after recovery "and include Rome" is in the transcript, after the reply so far
    And the tool steps I saw before it are kept

  Scenario: A steer whose delivery's answer was lost is still answered (API, steer.test.ts)
    Given a reply of three tool steps is running
    And a step boundary took my steer "keep Sunday free" in, but the database's answer never reached the run
    When the next step boundary comes
    Then the reply takes the steer in there and answers it, under the message id the database gave it
    And with no boundary left, the steer is kept after the reply instead

  Scenario: An edit whose commit lands as the database goes away is answered, not refused (versionFaults.test.ts)
    Given a chat with two exchanges
    When I edit my second message and the database goes away just after the edit committed
    Then the answer is the new version's reply, once the database is back, never a refusal
    And both versions are intact: the old one as it was, the new one with my edit and its reply

  Scenario: An edit rolled back by a hard kill leaves nothing in memory (versionFaults.test.ts)
    Given a chat with two exchanges
    When I edit my second message and the API is killed after the edit copied the history, before it committed
    Then the chat is as it was, and no copy of its history is stored anywhere
    And once I delete the chat, none of its text is left

  Scenario Outline: A queue change whose commit meets an outage is never refused as if nothing changed (queueFaults.test.ts)
    Given a stopped reply with four items waiting in the paused queue
    When I <change> and the database stops while that change commits
    Then if the change was stored, the 503 says "Reload to see whether it was", never "Try again shortly"
    And every text is in the queue or the transcript, a merge whole or absent

    Examples:
      | change                      |
      | merge two items             |
      | edit an item                |
      | delete an item              |
      | move an item                |

  Scenario: A failed head's edit cut off by a fault keeps its attempt (queueFaults.test.ts)
    Given a reply failed after three words and waits as the failed head, another item behind it
    When I edit (or delete) the failed head and the API is killed (or the database stops) before the change commits
    Then the head is still failed, and its message and partial reply are still in the transcript

  Scenario: A hard kill keeps what a landed checkpoint write holds
    When I send "a long story [[words:2000]] [[delay:40]]" and 20 words have streamed
    And a checkpoint write is held in flight while 5 more words stream
    And once it is released the next checkpoint write, holding all of them, has landed
    And the API is killed
    Then after recovery the stored reply holds every word I saw before the release
    And it is marked interrupted

  Scenario: A thread read as its turn settles shows my message somewhere
    Given a turn a runner holds whose message is not in the transcript yet
    When the thread is read while the turn settles between the read's parts
    Then my message is in the queue or in the transcript of that answer

  Scenario: The tool steps of a killed reply are kept
    When I send "check the time [[steps:4]] [[delay:1000]]" and two tool results have shown
    And the API is killed
    Then after recovery the turn is interrupted, names its reply, and both tool steps are in it

  Scenario: A reply stopped before its first word keeps its tool steps
    When I send "check the time [[steps:4]] [[delay:1000]]" and two tool results have shown
    And I press Stop
    Then the turn names its stored reply, marked interrupted, with both tool steps

  Scenario: A reply continued after an approval is named as stored
    When I send "note this [[tool:save_note]] [[words:12]]" and approve the call
    Then the turn is completed and names a reply that is stored

  Scenario: An approval is never refused after it was recorded
    When I approve a tool call and the database stops right after
    Then the approval is answered with the continuing reply, or refused with nothing changed
    # Unless the database stops during the commit itself: that refusal says to reload and see.

  Scenario: A claim of the queue head is never refused after it was recorded
    Given a thread at rest with one message waiting in the queue
    When I run the queue head and the database stops right after
    Then the claim is answered with the head's reply, or refused with the head still waiting

  Scenario: After an outage nothing is settled from a stale checkpoint
    Given a reply whose server is gone, its lease running out during an outage
    When the database comes back
    Then no reply is settled as interrupted until one lease has passed
    And then it is settled with what its checkpoint holds

  Scenario: A run that hangs does not block the chat
    Given the runner waits 1.5 seconds on a silent run
    When a reply sends three words and then nothing
    Then it is stopped as failed with "The model stopped responding; the reply was cut off."
    And its three words are kept, and the chat takes new messages

  Scenario Outline: Nothing accepted is lost through a fault at a random point
    When a reply, a settle, a steer's delivery and an approval play at once
    And <fault> hits each of them at a point chosen by the case's seed
    Then every accepted send is in the transcript or the queue
    And every reply is stored as far as the bound requires, its tool steps included
    And no turn is final, and no steer delivered, while its messages are missing

    Examples:
      | fault                         |
      | no fault (the control)        |
      | a 5 s database outage         |
      | a 30 s database outage        |
      | a 60 s database outage        |
      | a SIGKILL of the API          |

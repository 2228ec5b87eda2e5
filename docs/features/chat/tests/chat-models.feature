# Models and instructions per chat, in Gherkin.
# Automated in apps/web/e2e/models.spec.ts (browser; the suite's API offers `local` and `Local B`),
# apps/api/test/models.test.ts (API, with a recording OpenAI-compatible server started by the test)
# and apps/web/test/threadPage/chatSettings.test.ts (page state).

Feature: Models and instructions per chat
  The server offers several models; each chat has its own, each reply says which model wrote it,
  a reply can be written again by another model, and a person can give the model instructions for
  every chat and for one chat.

  Background:
    Given the server offers the models "local" (the default) and "Local B"
    And a new guest visits the start page
    And the page is interactive

  Scenario: The picker chooses the model of the next reply
    Given I sent "first question [[words:6]]" and its reply says "· local"
    When I pick "Local B" in the composer's model picker
    And I send "second question [[words:6]]"
    Then its reply says "· Local B"

  Scenario: The start page has the picker: the first message runs on the model picked there
    Given the server also offers "Built-in with a long name (8k window)"
    And the window is 1440x900
    When I pick "Built-in with a long name (8k window)" on the start page
    Then the picker shows that whole name, not cut
    When I send "first question [[words:6]]"
    Then its reply says "· Built-in with a long name (8k window)"
    And the next new chat's picker shows "Built-in with a long name (8k window)"

  Scenario: Regenerate with another model
    Given the latest reply was written by "Local B"
    When I open Regenerate's menu and choose "local"
    Then the question shows "2 / 2"
    And the new reply says "· local"
    And the picker still shows "Local B"

  Scenario: A queued message runs with the model chosen by the time it starts
    Given a reply is running with "local" and a message waits in the queue
    When I pick "Local B"
    Then the queued message's reply is written by "Local B"

  Scenario: A removed model fails the turn, never another model
    Given my chat's model was removed from the server's list
    When I send a message
    Then it waits as the failed head with "The model … is no longer offered here. Pick another model for this chat, then retry."

  Scenario: Instructions for this chat and for every chat
    When I open the chat menu and choose "Instructions for this chat"
    And I save "Answer like a pirate."
    Then after a reload the chat menu offers "Edit instructions for this chat" holding that text
    When I save "I prefer short answers." on the account page
    Then after a reload the account page holds that text
    And the model gets both after its built-in instructions, from the next reply on
    And neither is in a share or an export of the chat

  Scenario: A fresh install says its model is a scripted demo
    # Automated in apps/web/e2e/ownDeployment.spec.ts and apps/api/test/models.test.ts ("an honest first run").
    Given the server offers only the built-in model
    When I open the start page
    Then one line says "Scripted demo replies, not an AI." with a link "Connect a real model"
    And the link opens the README's "A real model" and "Several models" sections

  Scenario Outline: Models of other providers stream, use tools and stop
    # Automated in apps/api/test/providers.test.ts, against a scripted server of the project's own
    # that speaks the provider's wire protocol over real HTTP.
    Given the server offers "<entry>" with its key on the server
    When I send "hi there" in a chat with that model
    Then the reply streams and records the usage the provider counted
    And GET /api/models shows neither the key nor the URL
    When the model calls "save_note" and I approve it
    Then the note is saved and the tool's result goes back to the provider
    When I press Stop while a long reply streams
    Then the provider's stream is closed and the partial reply is kept, marked interrupted

    Examples:
      | entry                             |
      | anthropic:claude-test@<base URL>  |
      | google:gemini-test@<base URL>     |
      | compatible:qwen-test@<base URL>   |

  Scenario: A server's models are found, not typed
    # Automated in apps/api/test/modelDiscovery.test.ts, against a scripted server of our own.
    Given CHAT_MODELS has "compatible:*@<base URL>;id=lab;label=Lab" and that server lists "alpha" and "beta"
    Then the models offered are the demo model, "alpha (Lab)" and "beta (Lab)"
    When the server lists "alpha" and "gamma" instead
    Then within MODEL_LIST_REFRESH_MS the models offered are the demo model, "alpha (Lab)" and "gamma (Lab)"
    When the server stops answering
    Then its models are still listed, as unavailable
    And a server that does not answer at start is one entry "Lab (not answering)", and the start does not fail

  Scenario: An Ollama on this machine is found with nothing configured
    # Automated in apps/api/test/modelDiscovery.test.ts.
    Given no model is configured and an Ollama answers at OLLAMA_BASE_URL with "llama3.2:latest"
    Then the models offered are the demo model (the default) and "llama3.2:latest (Ollama)"
    And a chat with "ollama:llama3.2:latest" is answered through Ollama's OpenAI-compatible API

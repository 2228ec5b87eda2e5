# The Playwright flow of documents in chat (D1), in Gherkin.
# Automated in apps/web/e2e/documents.spec.ts against the production build, the real API and the
# built-in local model. The API side (sniffing, bounds, the bounded PDF worker, the budget and its
# cut note, references in memory, serving) is in apps/api/test/documents.test.ts.
# The local model's reply starts with what it read: I read <n> document(s): <name>, <pages>, <words>.

Feature: Documents in chat
  A person attaches PDFs and text files like images; they upload at once, show as chips in the
  composer, the Dock and the transcript, open as files, and the model reads their text within a
  budget.

  @documents
  Scenario: A PDF and a Markdown file queue, run, and open
    Given a chat whose reply is streaming
    When I attach "report.pdf" (2 pages) and "plan.md"
    Then the composer shows a chip "PDF · 2 pages" and a chip "Markdown · <size> B"
    When I send "summarise these"
    Then the Dock shows the message with both chips
    And once it ran the transcript shows both documents
    And the reply says "I read 2 documents: report.pdf, 2 pages, 4 words; plan.md, 6 words."
    And the PDF's chip opens application/pdf inline, and the Markdown's opens as plain text

  Scenario: What does not fit is cut with a note
    # Automated in apps/api/test/documents.test.ts.
    Given a budget of 400 tokens a message
    When I send a 20-page PDF
    Then the reply says "pages 1-<n> of 20 were read"

  Scenario: A hostile PDF is refused, the server keeps answering
    # Automated in apps/api/test/documents.test.ts.
    When I upload a 1.4 MB PDF whose content inflates to 400 MB
    Then the answer is 415 "This PDF could not be read: its compressed content expands too far."
    And the server answered a health check meanwhile, and grew by less than 200 MB

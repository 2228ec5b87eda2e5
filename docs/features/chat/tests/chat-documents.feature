# The Playwright flow of documents in chat (D1), in Gherkin.
# Automated in apps/web/e2e/documents.spec.ts against the production build, the real API and the
# built-in local model. The API side (sniffing, bounds, the bounded PDF worker, the budget and its
# cut note, references in memory, serving) is in apps/api/test/documents.test.ts, Word documents'
# in apps/api/test/wordDocuments.test.ts.
# The local model's reply starts with what it read: I read <n> document(s): <name>, <pages>, <words>.

Feature: Documents in chat
  A person attaches PDFs, Word documents and text files like images; they upload at once, show as chips in the
  composer, the Dock and the transcript, open as files, and the model reads their text within a
  budget.

  @documents
  Scenario: A PDF and a Markdown file queue, run, and open
    Given a chat whose reply is streaming
    When I attach "report.pdf" (2 pages) and "plan.md"
    Then the composer shows a chip "PDF · 2 pages" and a chip "Markdown · <size> B"
    When I send "summarise these"
    Then the Dock shows the message with both chips
    And once it ran the transcript shows both documents, "PDF · 2 pages" and "Markdown · <size> B"
    And neither chip notes a cut
    And the reply says "I read 2 documents: report.pdf, 2 pages, 4 words; plan.md, 6 words."
    And the PDF's chip opens application/pdf inline, and the Markdown's opens as plain text

  @documents
  @documents
  Scenario: A Word document attaches, shows its words, and is read
    Given a chat
    When I attach "memo.docx" of two paragraphs, 7 words
    Then the composer shows a chip "Word · 7 words"
    When I send "what does the memo say?"
    Then the transcript shows "memo.docx" with "Word · 7 words"
    And the reply says "I read 1 document: memo.docx, 7 words."
    And the chip's file downloads as the Word document itself

  Scenario: A Word document is cut by paragraphs
    # Automated in apps/api/test/wordDocuments.test.ts.
    Given a budget of 400 tokens a message
    When I send a Word document of 30 paragraphs of 50 words
    Then the reply says "lines 1-<n> of 30 were read", each line one paragraph

  @documents
  Scenario: What does not fit is cut with a note, in the reply and on the chip
    Given the default budget of 24,000 tokens a message
    When I send a text file of 5,000 lines of ten words
    Then the reply says "lines 1-<n> of 5,000 were read"
    And the file's chip in the transcript says "Text · <size> KB" and "Lines 1-<n> of 5,000 were read"

  @documents
  Scenario: On a model with a small window, I am told before sending what will not be read
    # Automated in apps/web/e2e/documentWindow.spec.ts (1440x900 and 390x844).
    Given a chat on "Small window", a model with a 2,000-token window
    When I attach a PDF of 60 pages
    Then a line by the composer says "Only about pages 1-<n> of 60 of report.pdf will be read by Small window."
    And the context meter counts the document
    When I send it
    Then the reply's recorded input is at most 2,000 tokens
    And the chip says "Pages 1-<m> of 60 were read", <m> at least <n>

  Scenario: A queued message gets the budget of the model it runs on
    # Automated in apps/api/test/documentWindow.test.ts.
    Given a chat on a 2,000-token model with a reply running
    When I queue a long text file and pick a 16,000-token model before it runs
    Then it runs on the larger model, reads more than the small one could hold
    And its recorded input is within 16,000 tokens

  Scenario: A long document is read only as far as the budget goes
    # Automated in apps/api/test/documents.test.ts.
    Given a budget of 400 tokens a message
    When the model reads a 500-page PDF
    Then it gets "pages 1-<n> of 500 were read", as when the PDF is read whole
    And less than a twentieth of the PDF's text was fetched from the database

  Scenario: A copy of a chat keeps its documents
    # Automated in apps/api/test/exports.test.ts, imports.test.ts, forkAndContinue.test.ts, shares.test.ts.
    Given a chat whose message carries "report.pdf" and "plan.md"
    When I export and import it, fork it, or continue its share
    Then the copy shows both documents as files of its own
    And its model says "I read 2 documents: report.pdf, 2 pages, 5 words; plan.md, 6 words."

  Scenario: A hostile PDF is refused, the server keeps answering
    # Automated in apps/api/test/documents.test.ts.
    When I upload a 1.4 MB PDF whose content inflates to 400 MB
    Then the answer is 415 "This PDF could not be read: its compressed content expands too far."
    And the server answered a health check meanwhile, and grew by less than 200 MB

  Scenario: A zip bomb called a Word document is refused, the server keeps answering
    # Automated in apps/api/test/wordDocuments.test.ts and imports.test.ts.
    When I upload a 400 KB Word document whose zip unpacks to 400 MB
    Then the answer is 415 "This Word document could not be read: it unpacks to more than 64 MB."
    And the same when its zip's directory claims 1 KB, found while unpacking
    And the server answered a health check meanwhile, and grew by less than 200 MB

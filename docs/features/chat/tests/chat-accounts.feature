Feature: Accounts people can come back to
  A guest can create an account or sign in without losing chats, sign out, manage sessions and
  delete everything. Automated in apps/web/e2e/accounts.spec.ts and firstVisit.spec.ts.

  Scenario: A first visit is never a blank page and logs no 401
    Given the page's first byte holds the app's outline
    When a new visitor opens the start page while the guest sign-in has not answered yet
    Then the sidebar and the composer are already there
    When the sign-in answers
    Then the account menu says "Guest" and the list says "No chats yet."
    And a message sent now gets its reply
    And no request answered 401 and the console has no error

  Scenario: A returning visit does not wait for the session check
    Given a guest with a chat
    When the chat is reloaded while the session check has not answered yet
    Then the chat's messages are shown

  Scenario: A guest signs up and keeps the chat
    Given a guest who sent "remember me [[words:4]]" and got a reply
    When the guest creates an account with a new email and the password "correct horse battery"
    Then the account menu shows the email
    And the sidebar shows the chat "remember me"
    When the page is reloaded
    Then the sidebar still shows the chat "remember me"

  Scenario: Signing up from a chat comes back to it, and a streaming reply goes on
    Given a guest whose chat "a long answer [[words:600]] [[delay:40]]" is streaming its reply
    When the guest chooses "Create an account" in the account menu and creates an account
    Then the page is the same chat, and the account menu shows the email
    And the reply is still streaming
    When it is finished
    Then it has 600 words and is not marked "Interrupted"

  Scenario: Sign out, then sign in on another browser
    Given a person signed in with a chat "remember me"
    When they choose "Sign out" in the account menu
    Then the sign-in page shows
    And the old session is refused by the API with 401
    When they sign in with the same email and password in a fresh browser
    Then the sidebar shows the chat "remember me"

  Scenario: The forms explain what is wrong
    Given the sign-up page
    When "not-an-email" and "short" are submitted
    Then the form says "Enter a valid email address" and "Use at least 8 characters"
    When an email that has an account is submitted
    Then the form says "An account with this email already exists. Sign in instead."
    Given the sign-in page
    When a wrong password is submitted
    Then the form says "Wrong email or password."
    When an unknown email is submitted
    Then the form says "Wrong email or password."

  Scenario: Sessions and deleting the account
    Given a person signed in on two browsers
    When they open "Account settings"
    Then two sessions are listed and one is marked "This device"
    When they choose "Sign out everywhere else"
    Then one session is listed and the other browser gets 401
    When they choose "Delete account" and confirm with "Delete everything"
    Then the sign-in page says "Your account and all its chats were deleted."
    And signing in with that email says "Wrong email or password."

  Scenario: A flood of wrong passwords never locks the owner out
    # Automated in apps/api/test/accounts.test.ts ("sign-in limits").
    Given an account with the email "owner@example.test"
    When one address signs in with a wrong password 5 times
    Then its next attempt on that email is refused with 429 rate_limited, even with the right password
    When 50 wrong passwords for that email came from many addresses
    Then each address that failed on it is refused, and a new address gets one try
    And the owner signs in with the right password from an address of their own

  Scenario: Leftover guest data goes once guests are off
    # Automated in apps/api/test/accounts.test.ts ("guests switched off: leftover guest data").
    Given a guest with a chat and a share link, who last visited 40 days ago
    And the server runs with AUTH_ALLOW_GUESTS=false and GUEST_GRACE_DAYS=30
    When the hourly sweep runs
    Then the guest's chat and share link are gone, and no row names the guest
    And accounts and guests who visited recently keep their chats

  Scenario: Sign-up is closed
    # Automated in apps/api/test/accounts.test.ts ("AUTH_ALLOW_SIGNUP") and apps/web/e2e/ownDeployment.spec.ts.
    Given the server runs with AUTH_ALLOW_SIGNUP=false
    When a visitor opens the sign-in page or the guest account menu
    Then neither offers "Create an account"
    And the sign-up page says "This server does not take new accounts. Sign in with an existing one."
    And a sign-up request is refused with 403 sign_up_disabled while an existing account signs in

import { expect, test } from './fixtures';

test.describe('tool calls in a reply', () => {
  test('six calls of one tool are one line that opens to each call, with no internal ids', async ({
    chat,
  }) => {
    await chat.startThread('what time is it [[steps:6]] [[delay:0]] [[words:5]]');
    await chat.waitForIdle();
    const reply = chat.lastReply();
    const calls = reply.getByTestId('tool-call');
    await expect(calls).toHaveCount(1);
    const line = calls.first();
    await expect(line.getByTestId('tool-call-outcome')).toHaveText('Used current_time 6 times');
    // Collapsed: no arguments or raw results fill the reply.
    await expect(line.getByTestId('tool-call-details')).toHaveCount(0);
    await expect(reply).not.toContainText('"now"');

    const toggle = line.getByRole('button', { name: 'Used current_time 6 times' });
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await toggle.focus();
    await chat.page.keyboard.press('Enter');
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    const details = line.getByTestId('tool-call-details');
    await expect(details).toBeVisible();
    await expect(details.getByText(/^Call \d of 6$/)).toHaveCount(6);
    await expect(details.getByTestId('tool-call-result')).toHaveCount(6);
    await expect(details.getByTestId('tool-call-result').first()).toContainText('"now"');
    await chat.page.keyboard.press('Enter');
    await expect(details).toBeHidden();
  });

  test('one call is one line; an approved note says so in words and shows no ids', async ({ chat }) => {
    await chat.startThread('what time is it [[tool:current_time]] [[words:4]]');
    await chat.waitForIdle();
    await expect(chat.lastReply().getByTestId('tool-call-outcome')).toHaveText('Used current_time');

    await chat.send('buy bread [[tool:save_note]] [[words:4]]');
    // The approved call's reply continues below it: find the card in the transcript.
    const card = chat.transcript.getByTestId('tool-call').last();
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await chat.waitForIdle();
    await expect(card.getByTestId('tool-call-outcome')).toHaveText('You approved saving the note');
    await card.getByTestId('tool-call-toggle').click();
    await expect(card.getByTestId('tool-call-args')).toContainText('"text": "buy bread"');
    const result = card.getByTestId('tool-call-result');
    await expect(result).toContainText('"saved": true');
    // The note's id (and the call's) mean nothing to a person.
    await expect(result).not.toContainText(/id/i);
  });
});

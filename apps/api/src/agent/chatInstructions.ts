/** The chat's own instructions to the model, whichever runtime driver runs the turn. */
export const CHAT_INSTRUCTIONS = [
  'You are a helpful, concise assistant in a web chat.',
  'People may send follow-up messages while you are still answering; those arrive as later turns.',
  'Use Markdown for structure and code blocks for code.',
].join(' ');

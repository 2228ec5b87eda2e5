import { ToolCatalog } from './toolCatalog';

/**
 * The tools of an agent chat (A5): Claude Code's own, by the names it calls them, as a chat's
 * settings panel lists them and its settings may name them (T1). A chat that changed nothing
 * leaves each call to the agent's own rules (it reads and searches without asking, and asks
 * before it writes or runs a command that changes something; the default modes say so); a tool
 * the person set is `off` (not offered), `ask` (every call waits for a person) or `allow` (runs
 * without asking), applied to the running agent at its next tool call.
 */
export const agentTools = new ToolCatalog([
  { name: 'Read', description: 'Reads a file of the workspace.', defaultMode: 'allow' },
  { name: 'Glob', description: 'Finds files of the workspace by name.', defaultMode: 'allow' },
  { name: 'Grep', description: 'Searches the files of the workspace.', defaultMode: 'allow' },
  { name: 'Edit', description: 'Changes a file of the workspace.', defaultMode: 'ask' },
  { name: 'Write', description: 'Writes a file of the workspace.', defaultMode: 'ask' },
  { name: 'NotebookEdit', description: 'Changes a Jupyter notebook of the workspace.', defaultMode: 'ask' },
  {
    name: 'Bash',
    description:
      'Runs a command in the workspace (by default only a command that changes nothing runs without asking).',
    defaultMode: 'ask',
  },
  { name: 'WebFetch', description: 'Fetches a web page.', defaultMode: 'ask' },
  { name: 'WebSearch', description: 'Searches the web.', defaultMode: 'ask' },
  {
    name: 'Agent',
    description: 'Starts a subagent (its tool calls follow these settings).',
    defaultMode: 'allow',
  },
]);

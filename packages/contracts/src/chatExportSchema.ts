import { z } from 'zod';
import { CHAT_EXPORT_FORMAT, CHAT_EXPORT_VERSION, chatExportV1 } from './chatExport';

/**
 * The JSON Schema of version 1 of the export format, as `schema/chat-export.v1.json` holds it:
 * generated from the zod schema the API validates imports with, so the two cannot differ.
 */
export function chatExportJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(chatExportV1, { target: 'draft-2020-12' }),
    $id: `urn:queued-turn-chat:chat-export:v${CHAT_EXPORT_VERSION}`,
    title: `Chat export, version ${CHAT_EXPORT_VERSION} (${CHAT_EXPORT_FORMAT})`,
    description:
      'One chat of queued-turn chat with every version, the replies’ models and stops, feedback, notes, tool approvals and images (base64). See docs/features/chat/export-format.md.',
  };
}

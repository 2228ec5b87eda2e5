import { mastraTranscriptTables } from './mastra/mastraTranscript';
import type { TranscriptTables } from './transcriptStore';

/**
 * The transcript store's statements and conversions (transcriptStore.ts). They hold no state, so
 * there is one of them, and this is the one place that says whose they are.
 */
export const transcriptTables: TranscriptTables = mastraTranscriptTables;

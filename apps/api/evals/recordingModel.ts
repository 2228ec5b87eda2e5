import type {
  LanguageModelV4,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';

/** One call the chat agent made to its model, as the model saw it. */
export interface RecordedCall {
  /** The case step that was running when the call was made (see `ModelRecorder.step`). */
  step: string;
  /** Every message of the prompt, system instructions included, in order. */
  prompt: Array<{ role: LanguageModelV4Message['role']; text: string }>;
  /** The system instructions alone. */
  system: string[];
  /** What the model answered (so far, when the call was aborted). */
  answer: string;
}

/**
 * Records every call of the wrapped model: the prompt messages and system instructions it
 * received and the text it answered. Cases run one at a time and set `step` before each turn, so
 * each call is attributed to the turn that made it.
 */
export class ModelRecorder {
  step = '';
  readonly calls: RecordedCall[] = [];

  wrap(model: LanguageModelV4): LanguageModelV4 {
    return wrapLanguageModel({
      model,
      middleware: {
        specificationVersion: 'v4',
        wrapGenerate: async ({ doGenerate, params }) => {
          const call = this.start(params.prompt);
          const result = await doGenerate();
          call.answer = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
          return result;
        },
        wrapStream: async ({ doStream, params }) => {
          const call = this.start(params.prompt);
          const result = await doStream();
          const recordText = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
            transform(part, controller) {
              if (part.type === 'text-delta') call.answer += part.delta;
              controller.enqueue(part);
            },
          });
          return { ...result, stream: result.stream.pipeThrough(recordText) };
        },
      },
    });
  }

  /** The calls made during one step. */
  callsOf(step: string): RecordedCall[] {
    return this.calls.filter((call) => call.step === step);
  }

  private start(prompt: LanguageModelV4Prompt): RecordedCall {
    const messages = prompt.map((message) => ({ role: message.role, text: messageText(message) }));
    const call: RecordedCall = {
      step: this.step,
      prompt: messages,
      system: messages.filter((message) => message.role === 'system').map((message) => message.text),
      answer: '',
    };
    this.calls.push(call);
    return call;
  }
}

function messageText(message: LanguageModelV4Message): string {
  if (message.role === 'system') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

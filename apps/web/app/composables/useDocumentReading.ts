import type { Attachment } from '@chat/contracts';
import type { Ref } from 'vue';
import type { ThreadPageState } from '~/threadPage/state';
import { type ContextMeterView, meterWithWaiting } from '~/threadPage/views';
import { type ComposerDocumentsView, composerDocumentsView } from '~/utils/documentReading';

/**
 * What the chat's model will read of the documents attached in the composer (D1): the warning
 * lines by the composer, and the meter with them counted (C2: the next message holds them).
 */
export function useDocumentReading(input: {
  state: Ref<ThreadPageState>;
  meter: Ref<ContextMeterView | null>;
  attachments: Ref<readonly Attachment[]>;
  draft: Ref<string>;
}) {
  const { models, load, chatModelOf } = useModels();
  onMounted(load);

  const documents = computed((): ComposerDocumentsView => {
    const { context, thread } = input.state.value;
    const model = models.value.find((offered) => offered.id === chatModelOf(thread?.model ?? undefined));
    if (!context || !model) return { tokens: 0, warnings: [] };
    return composerDocumentsView({
      attachments: input.attachments.value,
      window: context.window,
      used: context.used,
      draft: input.draft.value,
      model,
    });
  });

  return {
    warnings: computed(() => documents.value.warnings),
    meter: computed(() => input.meter.value && meterWithWaiting(input.meter.value, documents.value.tokens)),
  };
}

/**
 * Copies text to the clipboard (`copyText`, which also works on plain http) and says so for a
 * moment (`copied`). When copying fails, `copied` stays false and the caller's own selectable
 * text is the fallback.
 */
export function useCopyText(resetAfterMs = 2_000) {
  const copied = ref<string | null>(null);
  let timer: ReturnType<typeof setTimeout> | undefined;

  async function copy(text: string): Promise<boolean> {
    if (!(await copyText(text))) return false;
    copied.value = text;
    clearTimeout(timer);
    timer = setTimeout(() => {
      copied.value = null;
    }, resetAfterMs);
    return true;
  }

  onScopeDispose(() => clearTimeout(timer));
  return { copied: readonly(copied), copy };
}

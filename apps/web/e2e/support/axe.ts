import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';

/** axe-core (WCAG 2.2 A/AA and best practice) violations above "minor" on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
    .analyze();
  return results.violations
    .filter((violation) => violation.impact !== 'minor')
    .map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}

/** The specs' one accessibility check: axe-core's WCAG 2.1 A/AA and best-practice rules, no serious or critical violation. */
import AxeBuilder from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

/**
 * Runs axe on the page (or only inside `include`, a CSS selector) and fails with each serious or critical
 * violation's rule, help and first elements.
 *
 * Legacy mode: axe runs once in the page (`axe.run`, reaching same-origin frames itself) instead of a
 * partial run per frame finished in a second, blank page that loads axe again. The site's pages have no
 * cross-origin frames, the one case legacy mode leaves out (docs/testing.md says what it saves).
 */
export async function expectNoSeriousViolations(page: Page, { include }: { include?: string } = {}): Promise<void> {
  const builder = new AxeBuilder({ page }).setLegacyMode().withTags(TAGS);
  if (include) builder.include(include);
  const results = await builder.analyze();
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = serious
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join('\n  ')}`,
    )
    .join('\n');
  expect(serious, report).toEqual([]);
}

/** The editors' tag decisions (issue 35), read from the store's meta: which tags were merged into which, and which are hidden. */
import type { Store } from '../store/types.ts';
import { EMPTY_TAG_RULES, tagRulesSchema, type TagRules } from '../schemas/taxonomy.ts';

/** The meta key of the record. */
export const TAG_RULES_KEY = 'tag-rules';

/** The rules in force (none: nothing merged, nothing hidden); a record that does not parse counts as none. */
export async function readTagRules(store: Store): Promise<TagRules> {
  const stored = await store.meta.get<unknown>(TAG_RULES_KEY);
  if (stored === undefined) return EMPTY_TAG_RULES;
  const parsed = tagRulesSchema.safeParse(stored);
  return parsed.success ? parsed.data : EMPTY_TAG_RULES;
}

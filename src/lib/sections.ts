/** Display names of sections, shared by cards, chips and badges in the browser (no server import). */
import type { Section } from '../schemas/common.ts';

export const SECTION_LABELS: Record<Section, string> = {
  world: 'World',
  business: 'Business',
  politics: 'Politics',
  tech: 'Tech',
  sports: 'Sports',
  culture: 'Culture',
  opinion: 'Opinion',
  home: 'Top Stories',
};

/** The label of a section, or the raw value for anything unexpected (e.g. from a stale search index). */
export function labelSection(section: string): string {
  return (SECTION_LABELS as Record<string, string>)[section] ?? section;
}

/** The editor's Settings card: where the article is filed, who may read it whole, its tags and its flags. */
import { NAV_SECTIONS, type Section } from '../../schemas/common.ts';
import { SECTION_LABELS } from '../../lib/sections.ts';
import type { Access } from '../../schemas/member.ts';
import type { EditorForm } from './editor-form.ts';
import { TagsField } from './TagsField.tsx';

/** The default (home) first, then the sections of the navigation. */
const EDITOR_SECTIONS: readonly Section[] = ['home', ...NAV_SECTIONS];

/** Who may read the whole body (issue 48), as the editor names the levels. */
const ACCESS_CHOICES: ReadonlyArray<readonly [Access, string]> = [
  ['public', 'Public'],
  ['members', 'Members only'],
  ['paid', 'Paid subscribers only'],
];

type Props = {
  form: EditorForm;
  update: <K extends keyof EditorForm>(key: K, value: EditorForm[K]) => void;
};

export function SettingsCard({ form, update }: Props) {
  return (
    <section className="adm-card adm-form-stack" aria-labelledby="settings-heading">
      <h2 id="settings-heading" className="adm-card-title">
        Settings
      </h2>
      <label className="adm-field">
        <span>Section</span>
        <select value={form.section} onChange={(e) => update('section', e.target.value as Section)}>
          {EDITOR_SECTIONS.map((section) => (
            <option key={section} value={section}>
              {SECTION_LABELS[section]}
            </option>
          ))}
        </select>
      </label>
      <label className="adm-field">
        <span>Access</span>
        <select value={form.access} onChange={(e) => update('access', e.target.value as Access)} data-testid="editor-access">
          {ACCESS_CHOICES.map(([access, label]) => (
            <option key={access} value={access}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <TagsField tags={form.tags} onChange={(tags) => update('tags', tags)} />
      <label className="adm-switch adm-switch-row">
        <span>Breaking News</span>
        <input type="checkbox" role="switch" checked={form.isBreaking} onChange={(e) => update('isBreaking', e.target.checked)} />
        <span className="adm-switch-track" aria-hidden="true" />
      </label>
      <label className="adm-switch adm-switch-row">
        <span>Editor's Pick</span>
        <input type="checkbox" role="switch" checked={form.isEditorsPick} onChange={(e) => update('isEditorsPick', e.target.checked)} />
        <span className="adm-switch-track" aria-hidden="true" />
      </label>
    </section>
  );
}

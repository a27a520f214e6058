/** Members' settings beside the plans (issue 48): for now whether only signed-in members may comment. */
import { memberSettingsSchema, type MemberSettings } from '../../schemas/member.ts';
import type { Runtime } from '../runtime.ts';

export const MEMBER_SETTINGS_KEY = 'members.settings';

const DEFAULTS: MemberSettings = { commentsMembersOnly: false };

/** The stored settings, or the defaults (comments open to all) before an admin saved any or when the stored value no longer parses. */
export async function getMemberSettings(runtime: Runtime): Promise<MemberSettings> {
  const parsed = memberSettingsSchema.safeParse(await runtime.store.meta.get<unknown>(MEMBER_SETTINGS_KEY));
  return parsed.success ? parsed.data : DEFAULTS;
}

export async function saveMemberSettings(runtime: Runtime, settings: MemberSettings): Promise<MemberSettings> {
  await runtime.store.meta.set(MEMBER_SETTINGS_KEY, settings);
  runtime.log.info(
    { component: 'members', event: 'members.settings', commentsMembersOnly: settings.commentsMembersOnly },
    `[members] settings saved: comments ${settings.commentsMembersOnly ? 'for members only' : 'open to all'}`,
  );
  return settings;
}

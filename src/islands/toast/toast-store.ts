/** The one toast helper: any island calls toast(); the Toaster island shows one at a time, the newest replacing the last. */
import { getProcessWide } from '../../lib/process-wide.ts';

export type ToastVariant = 'default' | 'destructive';
export type ToastMessage = { id: number; title: string; description?: string | undefined; variant: ToastVariant };

type Listener = (toast: ToastMessage | undefined) => void;

type Channel = { current: ToastMessage | undefined; listeners: Set<Listener>; seq: number };
// Islands are separate bundles that may each include this module: one channel per page (src/lib/process-wide.ts).
const channel = getProcessWide<Channel>('toasts', () => ({ current: undefined, listeners: new Set(), seq: 0 }));

export function toast(input: { title: string; description?: string | undefined; variant?: ToastVariant }): void {
  channel.current = { id: ++channel.seq, title: input.title, description: input.description, variant: input.variant ?? 'default' };
  for (const listener of channel.listeners) listener(channel.current);
}

export function dismissToast(id?: number): void {
  if (id !== undefined && channel.current?.id !== id) return;
  channel.current = undefined;
  for (const listener of channel.listeners) listener(undefined);
}

export function subscribeToasts(listener: Listener): () => void {
  channel.listeners.add(listener);
  listener(channel.current);
  return () => channel.listeners.delete(listener);
}

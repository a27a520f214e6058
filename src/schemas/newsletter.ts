/** Newsletter subscriptions. */
import { z } from './zod.ts';

export const subscribeInputSchema = z.strictObject({
  email: z.string().trim().toLowerCase().max(254, 'Email is at most 254 characters').pipe(z.email('Please enter a valid email address.')),
});

export const subscriberSchema = z.object({
  id: z.string(),
  email: z.string(),
  token: z.string(),
  createdAt: z.string(),
  unsubscribedAt: z.string().optional(),
});
export type Subscriber = z.infer<typeof subscriberSchema>;

export const unsubscribeQuerySchema = z.object({ token: z.string().min(16).max(128).regex(/^[a-z0-9]+$/) });

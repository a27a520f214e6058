/** The Members tab's prices typed and edited in a currency's major unit, kept in its minor one (as Stripe counts, src/lib/money.ts). */
import { currencyDecimals } from '../../lib/money.ts';

/** A price typed in the major unit ("5", "5.50") as minor units; undefined unless positive, with at most the currency's decimals. */
export function parseMoney(text: string, currency: string): number | undefined {
  const digits = currencyDecimals(currency);
  const trimmed = text.trim();
  const pattern = digits > 0 ? new RegExp(`^\\d+(?:\\.\\d{1,${digits}})?$`) : /^\d+$/;
  if (!pattern.test(trimmed)) return undefined;
  const [whole, fraction = ''] = trimmed.split('.');
  const minor = Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  return Number.isSafeInteger(minor) && minor > 0 ? minor : undefined;
}

/** Minor units as the plans form shows them to edit ("5.00"). */
export function toMajorText(minor: number, currency: string): string {
  const digits = currencyDecimals(currency);
  return (minor / 10 ** digits).toFixed(digits);
}

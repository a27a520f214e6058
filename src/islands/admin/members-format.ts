/** The Members tab's money: prices kept in the currency's minor unit (cents, as Stripe counts) shown and typed in its major one. */

/** How many decimals a currency's minor unit has (2 for usd and eur, 0 for jpy), as the browser's Intl knows it. */
export function minorDigitsOf(currency: string): number {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** "$5.00" for 500 usd; an unknown currency code as "5.00 XYZ". */
export function formatMoney(minor: number, currency: string): string {
  const major = minor / 10 ** minorDigitsOf(currency);
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(major);
  } catch {
    return `${major.toFixed(2)} ${currency.toUpperCase()}`;
  }
}

/** A price typed in the major unit ("5", "5.50") as minor units; undefined unless positive, with at most the currency's decimals. */
export function parseMoney(text: string, currency: string): number | undefined {
  const digits = minorDigitsOf(currency);
  const trimmed = text.trim();
  const pattern = digits > 0 ? new RegExp(`^\\d+(?:\\.\\d{1,${digits}})?$`) : /^\d+$/;
  if (!pattern.test(trimmed)) return undefined;
  const [whole, fraction = ''] = trimmed.split('.');
  const minor = Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  return Number.isSafeInteger(minor) && minor > 0 ? minor : undefined;
}

/** Minor units as the plans form shows them to edit ("5.00"). */
export function toMajorText(minor: number, currency: string): string {
  const digits = minorDigitsOf(currency);
  return (minor / 10 ** digits).toFixed(digits);
}

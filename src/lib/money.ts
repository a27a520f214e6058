/** Money as people read it: amounts in a currency's minor unit (Stripe's cents) formatted for the account page, the admin and the mails. */

/** Stripe's zero-decimal currencies (https://docs.stripe.com/currencies#zero-decimal): their amounts are whole units. */
const ZERO_DECIMAL = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'ugx',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
]);

/** An amount in a currency's minor unit as people read it ("$5.00", "€50.00", "¥500"). */
export function formatMoney(amount: number, currency: string): string {
  const zeroDecimal = ZERO_DECIMAL.has(currency.toLowerCase());
  const value = zeroDecimal ? amount : amount / 100;
  try {
    return new Intl.NumberFormat('en', {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: zeroDecimal ? 0 : 2,
      maximumFractionDigits: zeroDecimal ? 0 : 2,
    }).format(value);
  } catch {
    // A code Intl does not know: still readable.
    return `${value.toFixed(zeroDecimal ? 0 : 2)} ${currency.toUpperCase()}`;
  }
}

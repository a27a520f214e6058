/** Money as people read it: amounts in a currency's minor unit (Stripe's cents) formatted for the account page, the admin and the mails. */

/** Stripe's zero-decimal currencies (https://docs.stripe.com/currencies#zero-decimal): their amounts are whole units. */
const ZERO_DECIMAL = new Set('bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf'.split(' '));
/** Stripe's three-decimal currencies: their amounts are thousandths. */
const THREE_DECIMAL = new Set('bhd jod kwd omr tnd'.split(' '));

/** How many decimals Stripe's amounts of a currency carry (0, 2 or 3). */
export function currencyDecimals(currency: string): number {
  const code = currency.toLowerCase();
  return ZERO_DECIMAL.has(code) ? 0 : THREE_DECIMAL.has(code) ? 3 : 2;
}

/** Whether a three-letter code is a currency people can be billed in (ISO 4217 as the runtime's Intl knows it). */
export function isKnownCurrency(currency: string): boolean {
  return Intl.supportedValuesOf('currency').includes(currency.toUpperCase());
}

/** An amount in a currency's minor unit as people read it ("$5.00", "€50.00", "¥500"). */
export function formatMoney(amount: number, currency: string): string {
  const decimals = currencyDecimals(currency);
  const value = amount / 10 ** decimals;
  try {
    return new Intl.NumberFormat('en', {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals,
    }).format(value);
  } catch {
    // A code Intl does not know: still readable.
    return `${value.toFixed(decimals)} ${currency.toUpperCase()}`;
  }
}

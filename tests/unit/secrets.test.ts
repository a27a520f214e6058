/** The one home of token hashing, signing and constant-time comparison (src/security/secrets.ts). */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashToken, isSameSecret, signMessage } from '../../src/security/secrets.ts';

describe('secrets', () => {
  it('hashes a token to the hex SHA-256 the stores already hold (session ids, subscriber token hashes)', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken('token-1')).toBe(createHash('sha256').update('token-1').digest('hex'));
  });

  it('signs with HMAC-SHA-256 in hex or base64url, so existing keys and upload URLs stay valid', () => {
    expect(signMessage('key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
    expect(signMessage('s', 'm', 'base64url')).toBe(createHmac('sha256', 's').update('m').digest('base64url'));
  });

  it('compares secrets: equal ones match; a different, shorter, longer, empty or missing one does not', () => {
    expect(isSameSecret('s3cret-value', 's3cret-value')).toBe(true);
    expect(isSameSecret('s3cret-valuf', 's3cret-value')).toBe(false);
    expect(isSameSecret('s3cret', 's3cret-value')).toBe(false);
    expect(isSameSecret('s3cret-value-and-more', 's3cret-value')).toBe(false);
    expect(isSameSecret('', '')).toBe(false);
    expect(isSameSecret(null, 's3cret-value')).toBe(false);
    expect(isSameSecret(undefined, undefined)).toBe(false);
    expect(isSameSecret('s3cret-value', undefined)).toBe(false);
  });
});

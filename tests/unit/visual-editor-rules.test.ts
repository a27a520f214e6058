/** The visual editor's pure rules: the link check, and the render-time srcset of inline images over the sanitiser's real output. */
import { describe, expect, it } from 'vitest';
import { checkLinkUrl } from '../../src/islands/editor/link-url.ts';
import { addInlineImageSrcset, INLINE_IMAGE_SIZES } from '../../src/lib/inline-images.ts';
import { sanitizeBodyHtml } from '../../src/server/html.ts';

const HASH = 'a1b2c3d4e5f60718';

describe('checkLinkUrl', () => {
  it.each(['https://example.com/a?b=c', 'http://example.com', 'mailto:desk@example.com', '/section/world', '/article/some-slug#comments'])(
    'accepts %s',
    (href) => expect(checkLinkUrl(href)).toEqual({ ok: true, href }),
  );

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    '//evil.example/x',
    'mailto:',
    'ftp://example.com/file',
    'example.com',
    '',
  ])('refuses %j', (href) => expect(checkLinkUrl(href).ok).toBe(false));

  it('trims what was typed around the address', () => {
    expect(checkLinkUrl('  https://example.com  ')).toEqual({ ok: true, href: 'https://example.com' });
  });
});

describe('addInlineImageSrcset', () => {
  it('gives an uploaded image in a figure the hero widths, keeping its alt and size', () => {
    const stored = sanitizeBodyHtml(
      `<figure><img src="/images/${HASH}/1200.webp" alt="A harbour at dawn" width="1200" height="675"><figcaption>Dawn</figcaption></figure>`,
    );
    const html = addInlineImageSrcset(stored);
    expect(html).toContain(`src="/images/${HASH}/800.webp"`);
    expect(html).toContain(`srcset="/images/${HASH}/400.webp 400w, /images/${HASH}/800.webp 800w, /images/${HASH}/1200.webp 1200w"`);
    expect(html).toContain(`sizes="${INLINE_IMAGE_SIZES}"`);
    expect(html).toContain('alt="A harbour at dawn"');
    expect(html).toContain('<figcaption>Dawn</figcaption>');
  });

  it('leaves external images and bodies without images as they are', () => {
    const external = sanitizeBodyHtml('<figure><img src="https://cdn.example.com/a.jpg" alt="x"></figure>');
    expect(addInlineImageSrcset(external)).toBe(external);
    expect(addInlineImageSrcset('<p>No images</p>')).toBe('<p>No images</p>');
  });

  it('never brings back what the sanitiser removed', () => {
    const stored = sanitizeBodyHtml(
      `<figure><img src="/images/${HASH}/1200.webp" alt="x" onerror="alert(1)" srcset="javascript:alert(1) 1x"></figure><script>alert(2)</script>`,
    );
    const html = addInlineImageSrcset(stored);
    expect(html).not.toMatch(/onerror|javascript:|<script/i);
    expect(html).toContain(`srcset="/images/${HASH}/400.webp 400w`);
  });
});

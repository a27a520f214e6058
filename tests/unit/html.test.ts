/** sanitizeBodyHtml: the allow-list of docs/product.md (Articles and publishing) and the XSS payloads it must defuse. */
import { describe, expect, it } from 'vitest';
import { htmlToText, sanitizeBodyHtml } from '../../src/server/html.ts';

describe('sanitizeBodyHtml', () => {
  it('keeps the allowed tags and attributes', () => {
    const html =
      '<h2>Title</h2><h3>Sub</h3><h4>Minor</h4><p>Text <strong>bold</strong> <em>it</em> <code>x</code><br></p>' +
      '<ul><li>a</li></ul><ol><li>b</li></ol><blockquote>q</blockquote><pre>p</pre><hr>' +
      '<figure><img src="https://img.example/a.jpg" alt="A" width="10" height="5" loading="lazy"><figcaption>cap</figcaption></figure>' +
      '<p><a href="/article/x" title="t">internal</a> <a href="mailto:desk@example.com">mail</a></p>';
    expect(sanitizeBodyHtml(html)).toBe(
      html.replace('<br>', '<br />').replace('<hr>', '<hr />').replace('loading="lazy">', 'loading="lazy" />'),
    );
  });

  it('marks external links noopener and opens them in a new tab', () => {
    expect(sanitizeBodyHtml('<a href="https://x.example">x</a>')).toBe(
      '<a href="https://x.example" rel="noopener noreferrer nofollow" target="_blank">x</a>',
    );
  });

  it('maps near-equivalents and unwraps unknown wrappers keeping their text', () => {
    expect(sanitizeBodyHtml('<h1>Big</h1><b>b</b><i>i</i><h6>s</h6>')).toBe('<h2>Big</h2><strong>b</strong><em>i</em><h4>s</h4>');
    expect(sanitizeBodyHtml('<div class="x"><span style="color:red">kept text</span></div>')).toBe('kept text');
  });

  it.each([
    ['<script>alert(1)</script><p>ok</p>', '<p>ok</p>'],
    ['<img src=x onerror=alert(1)>', '<img src="x" />'],
    ['<img src="javascript:alert(1)">', '<img />'],
    ['<img src="data:image/svg+xml;base64,PHN2Zz4=">', '<img />'],
    ['<a href="javascript:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="JaVaScRiPt:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="java&#x09;script:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="//evil.example/x">x</a>', '<a>x</a>'],
    ['<a href="vbscript:msgbox(1)">x</a>', '<a>x</a>'],
    ['<p onclick="alert(1)" style="background:url(javascript:alert(1))">t</p>', '<p>t</p>'],
    ['<svg onload=alert(1)><circle/></svg>', ''],
    ['<iframe src="https://evil.example"></iframe>', ''],
    ['<object data="x.swf"></object><embed src="x.swf">', ''],
    ['<style>body{display:none}</style><p>t</p>', '<p>t</p>'],
    ['<math><mtext><script>alert(1)</script></mtext></math>', ''],
    ['<form action="https://evil.example"><input name="p"><button>go</button></form>', 'go'],
    ['<p>a</p><!-- <script>alert(1)</script> -->', '<p>a</p>'],
    ['<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>', ''],
    ['<template><script>alert(1)</script></template>', ''],
    [
      '<a href="https://x.example" target="_self" onmouseover="alert(1)">x</a>',
      '<a href="https://x.example" target="_blank" rel="noopener noreferrer nofollow">x</a>',
    ],
  ])('defuses %s', (payload, expected) => {
    const clean = sanitizeBodyHtml(payload);
    expect(clean).toBe(expected);
    expect(clean).not.toMatch(/<script|javascript:|onerror|onload|onclick|onmouseover|style=|<iframe|<svg/i);
  });
});

describe('htmlToText', () => {
  it('answers the text with whitespace collapsed', () => {
    expect(htmlToText('<p>One <b>two</b></p>\n<p>three</p><script>four</script>')).toBe('One two three');
  });
});

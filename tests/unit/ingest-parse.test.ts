/** Feed parsing and item mapping on the real fixture feeds: items, charsets, relative URLs, duplicates, errors, XSS. */
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FeedParseError, decodeFeedText, parseFeed } from '../../src/server/ingest/feed-parse.ts';
import { canonicalizeUrl, itemToFields, truncateText, type ItemFields } from '../../src/server/ingest/feed-items.ts';
import { readFixture } from '../fixtures/feeds/feed-server.ts';

const BASE = 'http://feeds.test/feeds/';
const NOW = '2025-01-15T12:00:00.000Z';

async function fieldsOf(name: string, bytes = readFixture(name), contentType?: string): Promise<ItemFields[]> {
  const feed = await parseFeed(bytes, { feedUrl: BASE + name, contentType });
  return feed.items.map((item) => itemToFields(item, BASE + name, NOW)).filter((f): f is ItemFields => f !== undefined);
}

describe('parseFeed on the fixture corpus', () => {
  it('reads RSS 2.0 (rss2sample.xml): four items, the title-less one titled from its text', async () => {
    const feed = await parseFeed(readFixture('rss2sample.xml'), { feedUrl: BASE + 'rss2sample.xml' });
    expect([feed.type, feed.version, feed.title]).toEqual(['rss', '2.0', 'Liftoff News']);
    const items = await fieldsOf('rss2sample.xml');
    expect(items.map((i) => i.title)).toEqual([
      'Star City',
      expect.stringMatching(/^Sky watchers in Europe, Asia, and parts of Alaska and Canada/),
      'The Engine That Does More',
      "Astronauts' Dirty Laundry",
    ]);
    const star = items[0]!;
    expect(star.guid).toBe('http://liftoff.msfc.nasa.gov/2003/06/03.html#item573');
    expect(star.sourceUrl).toBe('http://liftoff.msfc.nasa.gov/news/2003/news-starcity.asp');
    expect(star.publishedAt).toBe('2003-06-03T09:39:21.000Z');
    expect(star.bodyHtml).toContain(
      '<a href="http://howe.iki.rssi.ru/GCTC/gctc_e.htm" rel="noopener noreferrer nofollow" target="_blank">Star City</a>',
    );
    expect(star.dek).toMatch(/^How do Americans get ready/);
    expect(star.dek).not.toContain('<');
  });

  it('reads Atom (tpm.atom): 20 entries, relative links resolved against the feed URL', async () => {
    const items = await fieldsOf('tpm.atom');
    expect(items).toHaveLength(20);
    expect(items[0]!.title).toBe('Hannity Announces Fox Has Hired Sebastian Gorka As NatSec Strategist');
    expect(items[0]!.guid).toBe('tag:talkingpointsmemo.com,2005:ArticleDecorator/270060');
    expect(items[0]!.sourceUrl).toBe('http://feeds.test/livewire/hannity-announces-fox-hired-sebastian-gorka-national-security-strategist');
    expect(items[0]!.publishedAt).toBe('2017-11-08T23:15:58.000Z');
    expect(items[0]!.bodyHtml.startsWith('<p>Fox News star host Sean Hannity')).toBe(true);
    expect(new Set(items.map((i) => i.guid)).size).toBe(20);
  });

  it('reads Atom with xml:base (intertwingly.atom): 20 entries with absolute links', async () => {
    const items = await fieldsOf('intertwingly.atom');
    expect(items).toHaveLength(20);
    expect(items[0]).toMatchObject({
      title: 'Inhibiting Suspend',
      guid: 'tag:intertwingly.net,2004:3299',
      publishedAt: '2012-07-16T15:48:01.000Z',
    });
    for (const item of items) expect(item.sourceUrl).toMatch(/^https?:\/\//);
  });

  it('reads RSS 1.0 / RDF (rss1-spec-example.rdf)', async () => {
    const feed = await parseFeed(readFixture('rss1-spec-example.rdf'), { feedUrl: BASE + 'rss1-spec-example.rdf' });
    expect([feed.type, feed.version, feed.title]).toEqual(['rdf', '1.0', 'XML.com']);
    const items = await fieldsOf('rss1-spec-example.rdf');
    expect(items.map((i) => [i.title, i.guid])).toEqual([
      ['Processing Inclusions with XSLT', 'http://xml.com/pub/2000/08/09/xslt/xslt.html'],
      ['Putting RDF to Work', 'http://xml.com/pub/2000/08/09/rdfdb/index.html'],
    ]);
    expect(items[0]!.publishedAt).toBe('2000-08-09T12:00:00.000Z');
    // No date in the item: it is published "now".
    expect(items[1]!.publishedAt).toBe(NOW);
  });

  it('decodes windows-1251 from the XML declaration (iconv.xml)', async () => {
    const items = await fieldsOf('iconv.xml');
    expect(items).toHaveLength(10);
    expect(items[0]!.title).toBe('В Бузулуке главные стройплощадки – детсад и Ледовый дворец');
    expect(items[0]!.tags).toEqual(['Раздел Новости/']);
    expect(items[0]!.heroImage).toBe('http://www.oren.ru/upload/iblock/be8/stroitelstvo_krany.jpg');
    expect(items.map((i) => i.title).join('')).not.toContain('\uFFFD');
  });

  it('unpacks a gzip feed served without Content-Encoding (compressed.xml) and decodes it the same', async () => {
    expect(await fieldsOf('compressed.xml')).toEqual(await fieldsOf('iconv.xml'));
  });

  it('decodes iso-8859-1 and windows-1252 from the Content-Type header over a wrong XML declaration', async () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Caf\u00e9</title><link>http://feeds.test/</link>
      <item><title>Cr\u00e8me br\u00fbl\u00e9e \u2013 \u201cquoted\u201d \u20ac5</title><link>http://feeds.test/a</link><description>Na\u00efve r\u00e9sum\u00e9</description></item></channel></rss>`;
    // windows-1252 has the dash, quotes and euro sign; iso-8859-1 (per the Encoding Standard, read as windows-1252) too.
    const bytes = Buffer.from(
      [...xml].map((ch) => ({ '\u2013': 0x96, '\u201c': 0x93, '\u201d': 0x94, '\u20ac': 0x80 })[ch] ?? ch.charCodeAt(0)),
    );
    for (const contentType of ['application/rss+xml; charset=windows-1252', 'text/xml; charset="ISO-8859-1"']) {
      const [item] = await fieldsOf('latin.xml', bytes, contentType);
      expect(item!.title).toBe('Crème brûlée – “quoted” €5');
      expect(item!.dek).toBe('Naïve résumé');
    }
    expect(decodeFeedText(Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>', 'latin1'))).toContain('<a>é</a>');
  });

  it('resolves relative URLs against xml:base (rss-with-relative-html-urls.xml)', async () => {
    const [item] = await fieldsOf('rss-with-relative-html-urls.xml');
    expect(item!.sourceUrl).toBe('https://example.com/posts/posts/post-1');
    expect(item!.bodyHtml).toContain('href="https://example.com/posts/post-1"');
    expect(item!.bodyHtml).toContain('<img src="https://example.com/images/post-1.png" />');
    expect(item!.heroImage).toBe('https://example.com/images/post-1.png');
    expect(item!.bodyHtml).not.toContain('<video');
  });

  it('resolves relative URLs against the feed URL when there is no xml:base (rss-with-relative-html-urls-no-base.xml)', async () => {
    const [item] = await fieldsOf('rss-with-relative-html-urls-no-base.xml');
    expect(item!.sourceUrl).toBe('http://feeds.test/feeds/posts/post-1');
    expect(item!.heroImage).toBe('http://feeds.test/images/post-1.png');
  });

  it('honours an item-scoped xml:base (rss-with-item-scoped-html-base.xml)', async () => {
    const items = await fieldsOf('rss-with-item-scoped-html-base.xml');
    expect(items.map((i) => i.sourceUrl)).toEqual(['https://example.com/first/first', 'http://feeds.test/feeds/second']);
    expect(items[0]!.bodyHtml).toContain('href="https://example.com/first/post"');
  });

  it('resolves relative item links of rss-with-relative-urls.xml against the feed URL', async () => {
    const items = await fieldsOf('rss-with-relative-urls.xml');
    expect(items).toHaveLength(2);
    expect(items[0]!.title).toBe('Neverwinter & Jingle Jam Humble Bundle!');
    expect(items[0]!.guid).toBe('http://www.arcgames.com/en/games/PAB_nw/news/detail/10743874');
    expect(items[0]!.sourceUrl).toBe(
      'http://feeds.test/en/games/neverwinter/news/detail/10743874-neverwinter-%26-jingle-jam-humble-bundle%21',
    );
  });

  it('reads one item from guid-dupes.xml (two guid elements) and drops the 1x1 tracking pixel as hero', async () => {
    const items = await fieldsOf('guid-dupes.xml');
    expect(items).toHaveLength(1);
    expect(items[0]!.guid).toBe('http://www.braingle.com/50366.html');
    expect(items[0]!.heroImage).toBe('http://feeds.feedburner.com/~ff/braingle/newteasers?d=yIl2AUoC8zA');
    expect(items[0]!.bodyHtml).not.toMatch(/<div|border=/);
  });

  it('picks the image media:content of mediacontent-dupes.xml, not the videos', async () => {
    const [item] = await fieldsOf('mediacontent-dupes.xml');
    expect(item!.heroImage).toBe('http://i.mol.im/i/pix/2013/02/03/article-2272640-174FCEE2000005DC-697_154x115.jpg');
    expect(item!.authorName).toBe('Editor');
    expect(item!.canonicalUrl).toBe(
      'http://www.dailymail.co.uk/news/article-2272640/Could-infamous-Black-Dahlia-case-solved-Cadaver-dog-discovers-death-scent-Hollywood-home-suspect-66-years-horrific-murder.html?ITO=1490&ns_campaign=1490&ns_mchannel=rss',
    );
  });

  it('recovers the items around an unescaped ampersand (saxerror.xml)', async () => {
    const items = await fieldsOf('saxerror.xml');
    expect(items.map((i) => [i.title, i.guid])).toEqual([
      ['Good Item', 'http://example.com/good'],
      ['Bad Item', 'http://example.com/bad'],
      ['Item After Error', 'http://example.com/after'],
    ]);
    expect(items[1]!.sourceUrl).toBe('http://example.com/bad?foo=1&bar=2');
  });

  it('refuses an HTML page with a clear error (notafeed.html)', async () => {
    await expect(parseFeed(readFixture('notafeed.html'), { feedUrl: BASE + 'notafeed.html', contentType: 'text/html' })).rejects.toThrow(
      new FeedParseError('The URL answered with an HTML page, not an RSS or Atom feed'),
    );
    // Even when the server calls it XML.
    await expect(parseFeed(readFixture('notafeed.html'), { feedUrl: BASE, contentType: 'application/xml' })).rejects.toThrow(
      /HTML page, not an RSS or Atom feed/,
    );
  });

  it('refuses empty bodies, non-XML text, JSON and corrupt gzip with clear errors', async () => {
    await expect(parseFeed(Buffer.from('  \n'), { feedUrl: BASE })).rejects.toThrow('The feed is empty');
    await expect(parseFeed(Buffer.from('just some words'), { feedUrl: BASE })).rejects.toThrow(
      'The URL did not answer with an RSS or Atom feed',
    );
    await expect(parseFeed(Buffer.from('{"items":[]}'), { feedUrl: BASE, contentType: 'application/json' })).rejects.toThrow(
      FeedParseError,
    );
    const gz = zlib.gzipSync(readFixture('rss2sample.xml'));
    await expect(parseFeed(gz.subarray(0, 200), { feedUrl: BASE })).rejects.toThrow(/compressed and could not be unpacked/);
  });

  it('salvages the complete items of a truncated feed and never throws anything but FeedParseError', async () => {
    const whole = readFixture('rss2sample.xml').toString('utf8');
    const cut = whole.slice(0, whole.indexOf('<item>', whole.indexOf('<item>') + 1) + 30);
    const items = await fieldsOf('cut.xml', Buffer.from(cut)).catch((error: unknown) => {
      expect(error).toBeInstanceOf(FeedParseError);
      return [];
    });
    for (const item of items) expect(item.title).toBeTruthy();
  });

  /** An RSS feed of `count` items whose descriptions hold `text`. */
  function bigFeed(count: number, text: string): Buffer {
    const items = Array.from(
      { length: count },
      (_, i) => `<item><title>Item ${i}</title><guid>urn:big:${i}</guid><description>${text}</description></item>`,
    );
    return Buffer.from(
      `<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Big</title>${items.join('')}</channel></rss>`,
    );
  }

  it('reads a feed of megabytes in slices without splitting a character between two of them', async () => {
    // Three UTF-16 units per repeat, so the slice boundaries fall inside the emoji's surrogate pair again and again.
    const text = 'é🗞'.repeat(4000);
    const feed = await parseFeed(bigFeed(150, text), { feedUrl: BASE });
    expect(feed.items).toHaveLength(150);
    for (const item of feed.items) expect(item.description).toBe(text);
  });

  it('lets the event loop run while it parses a large feed', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('another request'));
    await parseFeed(bigFeed(200, 'A paragraph of news. '.repeat(500)), { feedUrl: BASE });
    order.push('parsed');
    // Parsed in one go, the feed would be done before anything queued meanwhile could run.
    expect(order).toEqual(['another request', 'parsed']);
  });
});

describe('itemToFields', () => {
  it('keeps XSS payloads out of the body HTML', async () => {
    const payloads = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<a href="javascript:alert(1)">click</a>',
      '<iframe src="https://evil.test/"></iframe>',
      '<svg onload=alert(1)><circle/></svg>',
      '<p style="background:url(javascript:alert(1))" onclick="alert(1)">styled</p>',
      '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a>',
      '<object data="x.swf"></object><embed src="x.swf">',
      '<form action="https://evil.test"><input name=a></form>',
      '<img src="vbscript:msgbox(1)">',
      '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
    ].join('\n');
    const xml = `<?xml version="1.0"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>x</title><link>http://feeds.test/</link>
      <item><title>&lt;script&gt;alert(1)&lt;/script&gt;Title</title><link>http://feeds.test/xss</link>
      <description><![CDATA[${payloads}]]></description><content:encoded><![CDATA[<p>Body</p>${payloads}]]></content:encoded></item></channel></rss>`;
    const [item] = await fieldsOf('xss.xml', Buffer.from(xml));
    expect(item!.bodyHtml).toContain('<p>Body</p>');
    expect(item!.bodyHtml).not.toMatch(
      /<script|onerror|onload|onclick|javascript:|vbscript:|data:text|<iframe|<svg|<object|<embed|<form|<input|style=|<math/i,
    );
    // Titles are read as HTML and reduced to plain text (escaped again when rendered).
    expect(item!.title).toBe('alert(1)Title');
    // `<img src=x>` survives as a harmless resolved http URL; script schemes never do.
    expect(item!.heroImage).toBe('http://feeds.test/feeds/x');
  });

  it('clamps future dates to now, trims the dek to ~300 characters and keeps only http(s) links', async () => {
    const long = 'word '.repeat(200);
    const xml = `<rss version="2.0"><channel><title>x</title><link>http://feeds.test/</link>
      <item><title>Future</title><link>javascript:alert(1)</link><guid isPermaLink="false">g-1</guid><pubDate>Fri, 01 Jan 2100 00:00:00 GMT</pubDate><description>${long}</description>
      <category>World</category><category>world</category><category>  Politics </category></item></channel></rss>`;
    const [item] = await fieldsOf('x.xml', Buffer.from(xml));
    expect(item!.publishedAt).toBe(NOW);
    expect(item!.dek!.length).toBeLessThanOrEqual(300);
    expect(item!.dek!.endsWith('…')).toBe(true);
    expect(item!.sourceUrl).toBeUndefined();
    expect(item!.guid).toBe('g-1');
    expect(item!.tags).toEqual(['World', 'Politics']);
  });

  it('changes its fingerprint when the item is edited upstream, not otherwise', async () => {
    const feed = (title: string) =>
      Buffer.from(
        `<rss version="2.0"><channel><title>x</title><link>http://feeds.test/</link><item><title>${title}</title><link>http://feeds.test/a</link><description>Same</description></item></channel></rss>`,
      );
    const [a] = await fieldsOf('x.xml', feed('First title'));
    const [b] = await fieldsOf('x.xml', feed('First title'));
    const [c] = await fieldsOf('x.xml', feed('Second title'));
    expect(a!.fingerprint).toBe(b!.fingerprint);
    expect(c!.fingerprint).not.toBe(a!.fingerprint);
    expect(c!.guid).toBe(a!.guid);
  });
});

describe('canonicalizeUrl and truncateText', () => {
  it('normalises host case, default port, fragment, tracking parameters and parameter order', () => {
    expect(canonicalizeUrl('HTTPS://News.Example.COM:443/a/b?utm_source=rss&z=1&a=2&fbclid=x#section')).toBe(
      'https://news.example.com/a/b?a=2&z=1',
    );
    expect(canonicalizeUrl('http://example.com')).toBe('http://example.com/');
    expect(canonicalizeUrl('ftp://example.com/file')).toBeUndefined();
    expect(canonicalizeUrl('not a url')).toBeUndefined();
  });

  it('cuts at a word boundary', () => {
    expect(truncateText('alpha beta gamma delta', 18)).toBe('alpha beta gamma…');
    expect(truncateText('short', 12)).toBe('short');
  });
});

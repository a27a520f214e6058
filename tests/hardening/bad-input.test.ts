/**
 * A generated corpus of malformed requests against every endpoint (issue 8, "bad input"): wrong
 * types, missing and extra fields, huge strings, deep JSON, invalid UTF-8, wrong content types,
 * oversized bodies, bad page numbers and unknown enum values. None may answer 5xx, the server stays
 * up, and a rejected request changes nothing under DATA_DIR.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  createArticle,
  expectDataFilesValid,
  expectServerUp,
  freshIp,
  send,
  snapshotDataDir,
  startHardenedServer,
  waitForIdleQueue,
  type RawRequest,
  type TestClient,
  type TestServer,
} from './support.ts';

/** Fixed so a failure replays; override with FC_SEED to explore. */
const SEED = Number(process.env.FC_SEED ?? 20260808);
const MAX_JSON_BYTES = 1024 * 1024;

let server: TestServer;
let admin: TestClient;
let sessionCookie: string;
let ids: { article: string; slug: string; comment: string; source: string; uploadPath: string };
const seen: { status: number; request: string }[] = [];

beforeAll(async () => {
  server = await startHardenedServer();
  admin = await adminClient(server);
  sessionCookie = `session=${admin.cookies.get('session')}`;
  const article = await createArticle(admin, { title: 'Corpus target', status: 'published', section: 'world', tags: ['corpus'] });
  const comment = await admin.post(`/api/articles/${article.id}/comments`, {
    authorName: 'Reader',
    authorEmail: 'reader@example.com',
    content: 'First.',
  });
  expect(comment.status).toBe(201);
  const source = await admin.post('/api/news-sources', {
    name: 'Corpus feed',
    url: 'http://127.0.0.1:9/feed.xml',
    section: 'world',
    enabled: false,
  });
  expect(source.status).toBe(201);
  // Asked once up front: the first upload URL stores the signing secret, a legitimate write.
  const upload = await admin.post('/api/images/upload-url');
  expect(upload.status).toBe(200);
  ids = {
    article: article.id,
    slug: article.slug,
    comment: ((await comment.json()) as { id: string }).id,
    source: ((await source.json()) as { id: string }).id,
    uploadPath: ((await upload.json()) as { uploadURL: string }).uploadURL,
  };
  await waitForIdleQueue(server.url);
});

afterAll(async () => {
  await server?.stop();
});

// ---------------------------------------------------------------- values

/** Strings nobody types: control characters, lone surrogates, RTL marks, NUL, markup, very long. */
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    '\ud800',
    '\u202e\u202d',
    '<script>alert(1)</script>',
    '../../etc/passwd',
    '%00',
    '${7*7}',
    '{{7*7}}',
    '\r\nX-Injected: 1',
  ),
  fc.integer({ min: 1, max: 200_000 }).map((n) => 'x'.repeat(n)),
);

/** Deeply nested arrays and objects: parsers and error messages that recurse must not fall over. */
const deepValue = fc
  .tuple(fc.integer({ min: 1_000, max: 50_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? { __raw: '['.repeat(depth) + ']'.repeat(depth) } : { __raw: '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) },
  );

type FieldKind = 'string' | 'number' | 'boolean' | 'array' | 'enum' | 'url' | 'email' | 'nullable-datetime' | 'datetime';

/** A JSON value of another kind than the field expects (null only where null is not allowed). */
function wrongValueFor(kind: FieldKind): fc.Arbitrary<unknown> {
  const values: fc.Arbitrary<unknown>[] = [
    fc.constant({}),
    fc.array(fc.integer(), { maxLength: 3 }).map((a) => ({ nested: a })),
    deepValue,
  ];
  if (kind !== 'nullable-datetime') values.push(fc.constant(null));
  if (kind !== 'number') values.push(fc.oneof(fc.double({ noNaN: true }), fc.constantFrom(-1e308, 1e308, 0.5, -0.000001)));
  if (kind !== 'boolean') values.push(fc.boolean());
  if (kind !== 'array') values.push(fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 3 }));
  if (kind === 'number' || kind === 'boolean' || kind === 'array')
    values.push(fc.string({ maxLength: 10 }), fc.constantFrom('1', 'true', ''));
  if (kind === 'enum')
    values.push(fc.constantFrom('markets', 'WORLD', 'Published', 'all', '__proto__', 'constructor', 'draft ', 'visible\u0000'));
  if (kind === 'url')
    values.push(
      fc.constantFrom('javascript:alert(1)', 'file:///etc/passwd', 'ftp://example.com/x', 'not a url', 'http://', '//evil.example/x'),
    );
  if (kind === 'email') values.push(fc.constantFrom('no-at-sign', 'a@', '@b', 'a b@c.d', 'x'.repeat(300) + '@example.com'));
  if (kind === 'datetime' || kind === 'nullable-datetime')
    values.push(fc.constantFrom('tomorrow', '2025-13-45T99:99:99Z', '2025-01-01', '0', '2025-01-01T00:00:00'));
  return fc.oneof(...values);
}

type BodySpec = {
  method: string;
  path: () => string;
  admin: boolean;
  /** A valid body; every generated body breaks it in at least one way. */
  valid: () => Record<string, unknown>;
  fields: Record<string, FieldKind>;
  required: string[];
  /** Fields whose huge or odd strings are invalid (over the schema's limit). */
  limits: Record<string, number>;
  acceptsTextPlain?: boolean;
};

const specs: Record<string, BodySpec> = {
  createArticle: {
    method: 'POST',
    path: () => '/api/articles',
    admin: true,
    valid: () => ({ title: 'A title', bodyHtml: '<p>x</p>', section: 'world', tags: ['a'], status: 'draft' }),
    fields: {
      title: 'string',
      dek: 'string',
      bodyHtml: 'string',
      heroImage: 'url',
      section: 'enum',
      tags: 'array',
      authorName: 'string',
      sourceLabel: 'string',
      sourceUrl: 'url',
      readingTime: 'number',
      isBreaking: 'boolean',
      isEditorsPick: 'boolean',
      status: 'enum',
      scheduledFor: 'datetime',
    },
    required: ['title'],
    limits: { title: 300, dek: 1000, authorName: 100, sourceLabel: 100 },
  },
  updateArticle: {
    method: 'PUT',
    path: () => `/api/articles/${ids.article}`,
    admin: true,
    valid: () => ({ title: 'Corpus target', status: 'published' }),
    fields: {
      title: 'string',
      dek: 'string',
      bodyHtml: 'string',
      heroImage: 'url',
      section: 'enum',
      tags: 'array',
      authorName: 'string',
      sourceUrl: 'url',
      readingTime: 'number',
      isBreaking: 'boolean',
      status: 'enum',
      scheduledFor: 'nullable-datetime',
    },
    required: [],
    limits: { title: 300, dek: 1000, authorName: 100 },
  },
  comment: {
    method: 'POST',
    path: () => `/api/articles/${ids.article}/comments`,
    admin: false,
    valid: () => ({ authorName: 'Ann', authorEmail: 'ann@example.com', content: 'Nice.' }),
    fields: { authorName: 'string', authorEmail: 'email', content: 'string', website: 'string' },
    required: ['authorName', 'authorEmail', 'content'],
    limits: { authorName: 100, content: 5000, website: 500 },
  },
  commentStatus: {
    method: 'PUT',
    path: () => `/api/comments/${ids.comment}/status`,
    admin: true,
    valid: () => ({ status: 'hidden' }),
    fields: { status: 'enum' },
    required: ['status'],
    limits: {},
  },
  newsletter: {
    method: 'POST',
    path: () => '/api/newsletter/subscribe',
    admin: false,
    valid: () => ({ email: 'new@example.com' }),
    fields: { email: 'email' },
    required: ['email'],
    limits: { email: 254 },
  },
  login: {
    method: 'POST',
    path: () => '/api/auth/login',
    admin: false,
    valid: () => ({ username: 'admin', password: 'correct-horse-battery' }),
    fields: { username: 'string', password: 'string' },
    required: ['username', 'password'],
    limits: { username: 64, password: 256 },
  },
  pageview: {
    method: 'POST',
    path: () => '/api/analytics/pageview',
    admin: false,
    valid: () => ({ path: `/article/${ids.slug}` }),
    fields: { path: 'string' },
    required: ['path'],
    limits: { path: 512 },
    acceptsTextPlain: true,
  },
  createSource: {
    method: 'POST',
    path: () => '/api/news-sources',
    admin: true,
    valid: () => ({ name: 'Feed', url: 'http://127.0.0.1:9/other.xml', section: 'tech' }),
    fields: { name: 'string', type: 'enum', url: 'url', section: 'enum', enabled: 'boolean' },
    required: ['name', 'url', 'section'],
    limits: { name: 100 },
  },
  updateSource: {
    method: 'PUT',
    path: () => `/api/news-sources/${ids.source}`,
    admin: true,
    valid: () => ({ enabled: true }),
    fields: { enabled: 'boolean' },
    required: ['enabled'],
    limits: {},
  },
  adjustLikes: {
    method: 'POST',
    path: () => `/api/admin/articles/${ids.article}/adjust-likes`,
    admin: true,
    valid: () => ({ amount: 3 }),
    fields: { amount: 'number' },
    required: ['amount'],
    limits: {},
  },
  adjustDislikes: {
    method: 'POST',
    path: () => `/api/admin/articles/${ids.article}/adjust-dislikes`,
    admin: true,
    valid: () => ({ amount: -1 }),
    fields: { amount: 'number' },
    required: ['amount'],
    limits: {},
  },
  normalize: {
    method: 'POST',
    path: () => '/api/images/normalize',
    admin: true,
    valid: () => ({ imageUrl: 'http://127.0.0.1:9/x.jpg' }),
    fields: { imageUrl: 'string' },
    required: ['imageUrl'],
    limits: { imageUrl: 2048 },
  },
};

/** A body that breaks the valid one: as JSON value, or as raw text when it must not be JSON at all. */
type Mutation = { value?: unknown; raw?: Uint8Array<ArrayBuffer> | string; contentType?: string; why: string };

function mutationsOf(spec: BodySpec): fc.Arbitrary<Mutation> {
  const fieldNames = Object.keys(spec.fields);
  const oversized = fc
    .constantFrom(MAX_JSON_BYTES + 1, MAX_JSON_BYTES * 2)
    .map((size): Mutation => ({ raw: `{"a":"${'x'.repeat(size)}"}`, why: `body of ${size} bytes` }));
  // fetch labels a string body without a type text/plain, which beacons accept on purpose.
  const wrongTypes = [
    'text/html',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/jsonp',
    'json',
  ];
  if (!spec.acceptsTextPlain) wrongTypes.push('text/plain', '');
  const options: fc.Arbitrary<Mutation>[] = [
    // A field of the wrong type.
    fc
      .constantFrom(...fieldNames)
      .chain((field) =>
        wrongValueFor(spec.fields[field]!).map((value) => ({ value: { ...spec.valid(), [field]: value }, why: `wrong type for ${field}` })),
      ),
    // An extra field (every body schema is strict), including prototype keys.
    fc
      .tuple(
        fc.constantFrom('isAdmin', '__proto__', 'constructor', 'id', 'likes', 'passwordHash', 'role', 'x'),
        fc.oneof(fc.jsonValue({ maxDepth: 2 }), nastyString),
      )
      .map(([key, value]) => ({
        raw: JSON.stringify(spec.valid()).replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(value ?? null)},`),
        why: `extra field ${key}`,
      })),
    // Not an object at all.
    fc.constantFrom<unknown>([], [spec.valid()], 'text', 0, true, null).map((value) => ({ value, why: 'not an object' })),
    // Malformed JSON.
    fc.tuple(fc.nat(), fc.constantFrom('', ',', '\u0000', 'garbage', '//')).map(([cut, tail]) => {
      const text = JSON.stringify(spec.valid());
      return { raw: text.slice(0, 1 + (cut % (text.length - 1))) + tail, why: 'truncated JSON' };
    }),
    fc
      .constantFrom("{'a':1}", '{"a":1,}', 'NaN', '{"a":undefined}', '\ufeff\ufeff{}', '{"a":1}{"b":2}', '')
      .map((raw) => ({ raw, why: 'malformed JSON' })),
    // Deep JSON, as the whole body and inside a field (where an error message may try to print it).
    deepValue.map(({ __raw }) => ({ raw: __raw, why: 'deep JSON' })),
    fc
      .tuple(fc.constantFrom(...fieldNames), deepValue)
      .map(([field, deep]) => ({ value: { ...spec.valid(), [field]: deep }, why: `deep JSON in ${field}` })),
    // Invalid UTF-8 inside an otherwise valid-looking body.
    fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]).map((bad) => {
      const text = JSON.stringify(spec.valid());
      const split = text.indexOf('":"') + 3;
      const bytes = Buffer.concat([
        Buffer.from(text.slice(0, split > 2 ? split : 1)),
        Buffer.from(bad),
        Buffer.from(text.slice(split > 2 ? split : 1)),
      ]);
      return { raw: new Uint8Array(bytes), why: 'invalid UTF-8' };
    }),
    // A valid body under the wrong content type.
    fc.constantFrom(...wrongTypes).map((contentType) => ({
      raw: JSON.stringify(spec.valid()),
      contentType,
      why: `content type ${contentType || '(none)'}`,
    })),
    oversized,
  ];
  if (spec.required.length > 0) {
    options.push(
      fc.constantFrom(...spec.required).map((field) => {
        const value = spec.valid();
        delete value[field];
        return { value, why: `missing ${field}` };
      }),
    );
  }
  const limited = Object.entries(spec.limits);
  if (limited.length > 0) {
    options.push(
      fc
        .constantFrom(...limited)
        .chain(([field, max]) =>
          fc
            .integer({ min: max + 1, max: max + 100_000 })
            .map((n) => ({ value: { ...spec.valid(), [field]: 'y'.repeat(n) }, why: `${field} of ${n} characters` })),
        ),
    );
  }
  // Oversized bodies are the slowest to send: one in ~40 requests is enough to prove the limit.
  return fc.oneof(...options.map((arbitrary) => ({ arbitrary, weight: arbitrary === oversized ? 1 : 4 })));
}

function toRequest(spec: BodySpec, mutation: Mutation, ip: string): RawRequest {
  const headers: Record<string, string> = { 'X-Forwarded-For': ip };
  if (spec.admin) headers.Cookie = sessionCookie;
  const contentType = mutation.contentType ?? 'application/json';
  if (contentType) headers['Content-Type'] = contentType;
  let body: Uint8Array<ArrayBuffer> | string;
  if (mutation.raw !== undefined) body = mutation.raw;
  else {
    // deepValue markers are spliced in as raw text so the nesting survives JSON.stringify's own limits.
    const marker = '"__deep_marker__"';
    let raw: string | undefined;
    body =
      JSON.stringify(mutation.value, (_key, value: unknown) => {
        if (value && typeof value === 'object' && '__raw' in value) {
          raw = (value as { __raw: string }).__raw;
          return '__deep_marker__';
        }
        return value;
      }) ?? 'null';
    if (raw !== undefined) body = body.replace(marker, raw);
  }
  return { method: spec.method, path: spec.path(), headers, body };
}

function describeRequest(request: RawRequest, why: string): string {
  const body = typeof request.body === 'string' ? request.body : request.body ? `<${request.body.byteLength} bytes>` : '';
  return `${why}: ${request.method} ${request.path} [${request.headers?.['Content-Type'] ?? ''}] ${body.slice(0, 200)}`;
}

/** Runs `runs` generated requests; each must be refused with a 4xx (none of them is valid). */
async function refuseAll(
  arbitrary: fc.Arbitrary<{ request: RawRequest; why: string }>,
  runs: number,
  allowed: (status: number) => boolean = (s) => s >= 400 && s < 500,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitrary, async ({ request, why }) => {
      const { status, text } = await send(server.url, request);
      seen.push({ status, request: describeRequest(request, why) });
      if (!allowed(status)) throw new Error(`${status} for ${describeRequest(request, why)}\n${text.slice(0, 300)}`);
    }),
    { numRuns: runs, seed: SEED, endOnFailure: true },
  );
}

// ---------------------------------------------------------------- queries and paths

/** Page numbers no route accepts. */
const badPage = fc.oneof(
  fc.integer({ max: 0 }).map(String),
  fc.integer({ min: 1_000_001 }).map(String),
  fc
    .double({ noNaN: true, min: 1.01, max: 99.99 })
    .filter((n) => !Number.isInteger(n))
    .map(String),
  fc.constantFrom('-1', '0', '1e400', '-1e400', 'Infinity', 'NaN', 'abc', '99999999999999999999999', '1.5', '½', '١', '-0', '%00'),
);

const queryCases: { path: string; param: string; bad: fc.Arbitrary<string>; admin?: boolean }[] = [
  { path: '/api/articles', param: 'page', bad: badPage },
  { path: '/api/articles', param: 'pageSize', bad: fc.oneof(badPage, fc.constantFrom('101', '1000')) },
  { path: '/api/articles', param: 'limit', bad: fc.oneof(badPage, fc.constantFrom('101')) },
  { path: '/api/articles', param: 'section', bad: fc.constantFrom('markets', 'WORLD', '../world', 'world\u0000', 'all') },
  { path: '/api/articles', param: 'status', bad: fc.constantFrom('deleted', 'PUBLISHED', 'draft;published') },
  { path: '/api/articles', param: 'dateFrom', bad: fc.constantFrom('yesterday', '2025-02-30', '2025-1-1', '0') },
  { path: '/api/articles', param: 'isBreaking', bad: fc.constantFrom('yes', '1', 'TRUE', 'null') },
  { path: '/api/articles', param: 'search', bad: fc.integer({ min: 201, max: 5000 }).map((n) => 'q'.repeat(n)) },
  { path: '/api/articles/count', param: 'page', bad: badPage },
  { path: '/api/articles/count', param: 'status', bad: fc.constantFrom('deleted', 'all') },
  { path: '/api/search', param: 'page', bad: badPage },
  { path: '/api/search', param: 'section', bad: fc.constantFrom('markets', 'home ', 'ALL', '<script>') },
  {
    path: '/api/search',
    param: 'q',
    bad: fc.oneof(
      fc.constantFrom('', '   '),
      fc.integer({ min: 201, max: 5000 }).map((n) => 'q'.repeat(n)),
    ),
  },
  { path: '/api/search/count', param: 'pageSize', bad: badPage },
  { path: '/api/admin/comments', param: 'page', bad: badPage, admin: true },
  { path: '/api/admin/comments', param: 'status', bad: fc.constantFrom('deleted', 'VISIBLE', 'spam'), admin: true },
  { path: '/api/admin/comments/count', param: 'pageSize', bad: fc.oneof(badPage, fc.constantFrom('101')), admin: true },
];

const queryRequest = fc.constantFrom(...queryCases).chain((testCase) =>
  testCase.bad.map((value) => {
    const params = new URLSearchParams(testCase.path.startsWith('/api/search') && testCase.param !== 'q' ? { q: 'corpus' } : {});
    params.set(testCase.param, value);
    const headers: Record<string, string> = {};
    if (testCase.admin) headers.Cookie = sessionCookie;
    return { request: { method: 'GET', path: `${testCase.path}?${params}`, headers } as RawRequest, why: `bad ${testCase.param}` };
  }),
);

/** Ids, slugs and tokens that name nothing or try to escape: 400 or 404, never a 500. */
const badId = fc.oneof(
  fc.constantFrom(
    '..',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    'x%00y',
    '%ff',
    '%E0%A4%A',
    'a'.repeat(5000),
    '__proto__',
    'constructor',
    '%20',
    '-1',
    '0',
    'NaN',
    "1'OR'1'='1",
    '<svg>',
  ),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);

const pathRequest = fc
  .tuple(
    badId,
    fc.constantFrom(
      (id: string) => ['GET', `/api/articles/${id}`],
      (id: string) => ['GET', `/api/articles/by-slug/${id}`],
      (id: string) => ['GET', `/api/articles/${id}/comments`],
      (id: string) => ['GET', `/api/articles/${id}/vote`],
      (id: string) => ['POST', `/api/articles/${id}/like`],
      (id: string) => ['POST', `/api/articles/${id}/dislike`],
      (id: string) => ['POST', `/api/articles/${id}/comments`],
      (id: string) => ['DELETE', `/api/articles/${id}`],
      (id: string) => ['DELETE', `/api/comments/${id}`],
      (id: string) => ['PUT', `/api/comments/${id}/status`],
      (id: string) => ['DELETE', `/api/news-sources/${id}`],
      (id: string) => ['POST', `/api/news-sources/${id}/fetch`],
      (id: string) => ['PUT', `/api/images/upload/${id}?expires=1&sig=x`],
      (id: string) => ['GET', `/article/${id}`],
      (id: string) => ['GET', `/section/${id}`],
      (id: string) => ['GET', `/section/world/page/${id}`],
      (id: string) => ['GET', `/newsletter/unsubscribe?token=${id}`],
    ),
    fc.constantFrom('', '{}', '{"status":"hidden"}', '{"authorName":"a","authorEmail":"a@b.c","content":"c"}'),
  )
  .map(([id, route, body]) => {
    const [method, path] = route(id) as [string, string];
    const headers: Record<string, string> = { Cookie: sessionCookie, 'X-Forwarded-For': freshIp() };
    if (method !== 'GET' && body) headers['Content-Type'] = 'application/json';
    return { request: { method, path, headers, ...(method !== 'GET' && body ? { body } : {}) } as RawRequest, why: 'bad id' };
  });

/** Section listings with page numbers out of range: the 404 screen, not a 500 and not a page. */
const pageRequest = fc.tuple(fc.constantFrom('world', 'home', 'tech', 'markets'), badPage).map(([section, page]) => ({
  request: { method: 'GET', path: `/section/${section}/page/${encodeURIComponent(page)}` } as RawRequest,
  why: 'bad page number',
}));

/** Action endpoints that take no body, sent one anyway. */
const actionRequest = fc
  .tuple(
    fc.constantFrom(
      () => `/api/articles/${ids.article}/like`,
      () => `/api/articles/${ids.article}/dislike`,
      () => '/api/auth/logout',
      () => '/api/images/upload-url',
      () => `/api/news-sources/${ids.source}/fetch`,
    ),
    fc.oneof(
      fc.constantFrom('[]', '{"a":1}', 'garbage', '"x"'),
      fc.integer({ min: 1025, max: 200_000 }).map((n) => 'z'.repeat(n)),
    ),
  )
  .map(([route, body]) => ({
    request: {
      method: 'POST',
      path: route(),
      headers: { Cookie: sessionCookie, 'Content-Type': 'application/json', 'X-Forwarded-For': freshIp() },
      body,
    } as RawRequest,
    why: 'body on an action endpoint',
  }));

/** Upload PUTs with every part wrong: no signature, a bad one, a wrong type, no body. */
const uploadRequest = fc
  .tuple(
    fc.constantFrom('', '?expires=abc&sig=x', '?expires=99999999999999999&sig=', '?sig=AAAA', '?expires=-1&sig=%ff'),
    fc.constantFrom('image/svg+xml', 'text/html', 'application/javascript', 'image/png', ''),
    fc.constantFrom('<svg onload=alert(1)>', '<script>alert(1)</script>', '\x89PNG\r\n'),
  )
  .map(([query, type, body]) => {
    const token = ids.uploadPath.split('?')[0]!;
    const headers: Record<string, string> = type ? { 'Content-Type': type } : {};
    return { request: { method: 'PUT', path: `${token}${query}`, headers, body } as RawRequest, why: 'bad upload' };
  });

// ---------------------------------------------------------------- the runs

describe('a generated corpus of malformed requests', () => {
  let before: Record<string, string>;
  let articlesBefore: string;

  beforeAll(async () => {
    before = await snapshotDataDir(server.dataDir);
    articlesBefore = await (await fetch(new URL(`/article/${ids.slug}`, server.url))).text();
  });

  for (const [name, spec] of Object.entries(specs)) {
    it(`${spec.method} (${name}): 130 broken bodies refused with a 4xx`, async () => {
      const arbitrary = mutationsOf(spec).map((mutation) => ({ request: toRequest(spec, mutation, freshIp()), why: mutation.why }));
      // Comments, sign-ups and beacons are rate limited before parsing: every request has its own address.
      await refuseAll(arbitrary, 130);
    });
  }

  it('query strings: 300 bad page numbers, enums, dates and lengths answer 400', async () => {
    await refuseAll(queryRequest, 300, (status) => status === 400);
  });

  it('ids, slugs and tokens: 250 hostile ones answer below 500 (clients normalise `..`, so some land elsewhere)', async () => {
    await refuseAll(pathRequest, 250, (status) => status < 500);
  });

  it('section pages: 100 out-of-range page numbers answer 404', async () => {
    await refuseAll(pageRequest, 100, (status) => status === 404);
  });

  it('action endpoints: 60 bodies where none belongs answer a 4xx', async () => {
    await refuseAll(actionRequest, 60);
  });

  it('upload URLs: 40 forged or mistyped PUTs answer a 4xx', async () => {
    await refuseAll(uploadRequest, 40);
  });

  it('sent at least 2,000 requests, none answered 5xx, and the server is still up', async () => {
    expect(seen.length).toBeGreaterThanOrEqual(2_000);
    expect(seen.filter((s) => s.status >= 500)).toEqual([]);
    await expectServerUp(server);
  });

  it('changed nothing under DATA_DIR and regenerated no page', async () => {
    await waitForIdleQueue(server.url);
    expect(await snapshotDataDir(server.dataDir)).toEqual(before);
    expectDataFilesValid(server.dataDir);
    expect(await (await fetch(new URL(`/article/${ids.slug}`, server.url))).text()).toBe(articlesBefore);
  });
});

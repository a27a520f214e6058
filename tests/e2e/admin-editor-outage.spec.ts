/**
 * Issue 31: the editor keeps text a save could not store. On a server of its own over a PostgreSQL
 * cluster of its own, the database is stopped (pg_ctl -m fast) under an open editor: the save answers
 * 503 and the text stays in the browser, a reload shows the 503 page (not the sign-in page), and once
 * the database is back the reloaded editor offers the text again, which then saves.
 */
import { expect, test } from './fixtures.ts';
import { createDatabase, startCluster, type Cluster } from '../helpers/postgres.ts';
import { ADMIN, startServer, type TestServer } from '../helpers/server.ts';
import { declineCookies, expectToast, waitForIsland } from './admin-helpers.ts';

// Its own cluster and server, on the suite's build: only the PostgreSQL project runs it (the lowdb one has no database to stop).
let cluster: Cluster;
let server: TestServer;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  cluster = await startCluster();
  server = await startServer({ env: { DATABASE_URL: await createDatabase(cluster.url, 'editor_outage') } });
});

test.afterAll(async () => {
  await server?.stop();
  cluster?.stop();
});

test(
  'a save the database could not take keeps the text in the browser, offered again after a reload',
  { tag: '@store' },
  async ({ page }) => {
    test.setTimeout(90_000);
    await declineCookies(page);
    const login = await page.request.post(`${server.url}/api/auth/login`, { data: ADMIN });
    expect(login.status()).toBe(200);
    const created = await page.request.post(`${server.url}/api/articles`, {
      data: { title: 'Tidal barrier review', section: 'world', status: 'draft', bodyHtml: '<p>First draft.</p>' },
    });
    expect(created.status()).toBe(201);
    const article = (await created.json()) as { id: string };
    const editorUrl = `${server.url}/admin/editor/${article.id}`;
    await page.goto(editorUrl);
    await waitForIsland(page);
    const body = page.getByLabel('Article Body (HTML)');
    await expect(body).toHaveValue('<p>First draft.</p>');

    cluster.halt('fast');
    const typed = '<p>Written while the database was down.</p>';
    await body.fill(typed);
    await page.getByRole('button', { name: 'Save Draft', exact: true }).click();
    await expectToast(
      page,
      'Not saved',
      'The database is unavailable; try again in a few seconds. Your text is kept in this browser until it is saved.',
    );
    await expect(body).toHaveValue(typed);

    // A reload while the database is down: the 503 page, still signed in (no sign-in page, no cookie lost).
    const down = await page.reload();
    expect(down?.status()).toBe(503);
    await expect(page.getByRole('heading', { name: 'Temporarily unavailable' })).toBeVisible();
    expect(page.url()).toBe(editorUrl);
    expect((await page.context().cookies(server.url)).some((c) => c.name === 'session')).toBe(true);

    cluster.resume();
    await expect(async () => expect((await page.request.get(`${server.url}/api/ready`)).status()).toBe(200)).toPass({ timeout: 20_000 });
    await page.goto(editorUrl);
    await waitForIsland(page);
    // The stored article still has the first draft; the kept text is offered with a clear choice.
    await expect(body).toHaveValue('<p>First draft.</p>');
    const offer = page.getByTestId('editor-unsaved-text');
    await expect(offer).toContainText('You have unsaved changes from an earlier visit');
    await offer.getByRole('button', { name: 'Restore my unsaved text' }).click();
    await expect(offer).toBeHidden();
    await expect(body).toHaveValue(typed);
    await page.getByRole('button', { name: 'Save Draft', exact: true }).click();
    await expectToast(page, 'Article updated', 'Your article has been updated successfully.');
    const saved = (await (await page.request.get(`${server.url}/api/articles/${article.id}`)).json()) as { bodyHtml: string };
    expect(saved.bodyHtml).toBe(typed);

    // Saved: nothing is offered any more.
    await page.reload();
    await waitForIsland(page);
    await expect(body).toHaveValue(typed);
    await expect(page.getByTestId('editor-unsaved-text')).toHaveCount(0);
  },
);

/** Comments in hashed buckets; in memory a newest-first list overall and per article, kept sorted on each write. */
import type { Comment, CommentFilter } from '../../schemas/comment.ts';
import type { CommentRepository, Page } from '../types.ts';
import { bucketOf, type BucketSet } from './layout.ts';

function matchesComment(comment: Comment, filter: CommentFilter): boolean {
  if (filter.articleId && comment.articleId !== filter.articleId) return false;
  if (filter.status && comment.status !== filter.status) return false;
  if (filter.search) {
    const needle = filter.search.toLowerCase();
    const haystack = `${comment.authorName}\n${comment.authorEmail}\n${comment.content}`.toLowerCase();
    if (!haystack.includes(needle)) return false;
  }
  return true;
}

/** The layout-1 comments.json (read by the migration). */
export type CommentsFile = { comments: Comment[] };
/** comments/<bucket>.json: the comments whose id hashes to the bucket. */
export type CommentBucket = Record<string, Comment>;

/** Newest first; ties by id so every comment has one place (found by binary search). */
function byNewest(a: Comment, b: Comment): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function sortedIndex(list: Comment[], item: Comment): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byNewest(list[mid]!, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertComment(list: Comment[], item: Comment): void {
  list.splice(sortedIndex(list, item), 0, item);
}

function removeComment(list: Comment[], item: Comment): void {
  const i = sortedIndex(list, item);
  if (list[i] === item) list.splice(i, 1);
}

/** Comments in hashed buckets; in memory a newest-first list overall and per article, kept sorted on each write. */
export class LowdbComments implements CommentRepository {
  readonly #buckets: BucketSet<CommentBucket>;
  readonly #byId = new Map<string, Comment>();
  readonly #all: Comment[] = [];
  readonly #byArticle = new Map<string, Comment[]>();

  constructor(buckets: BucketSet<CommentBucket>) {
    this.#buckets = buckets;
    for (const [, bucket] of buckets.entries())
      for (const comment of Object.values(bucket)) {
        this.#byId.set(comment.id, comment);
        this.#all.push(comment);
      }
    this.#all.sort(byNewest);
    for (const comment of this.#all) this.#articleList(comment.articleId).push(comment);
    // A bucket whose write failed (a full disk) is back as its file has it: so are its comments here.
    buckets.onRevert((_bucket, before, after) => {
      for (const id of new Set([...Object.keys(before), ...Object.keys(after)])) {
        const current = this.#byId.get(id);
        if (current) this.#unlist(current);
        const stored = after[id];
        if (stored) this.#list(stored);
      }
    });
  }

  #list(comment: Comment): void {
    this.#byId.set(comment.id, comment);
    insertComment(this.#all, comment);
    insertComment(this.#articleList(comment.articleId), comment);
  }

  /** Takes a comment out of the in-memory lists (not out of its bucket). */
  #unlist(comment: Comment): void {
    this.#byId.delete(comment.id);
    removeComment(this.#all, comment);
    const list = this.#byArticle.get(comment.articleId);
    if (list) {
      removeComment(list, comment);
      if (list.length === 0) this.#byArticle.delete(comment.articleId);
    }
  }

  #articleList(articleId: string): Comment[] {
    let list = this.#byArticle.get(articleId);
    if (!list) this.#byArticle.set(articleId, (list = []));
    return list;
  }

  #forget(comment: Comment): number {
    this.#unlist(comment);
    const b = bucketOf('comments', comment.id);
    delete this.#buckets.get(b)[comment.id];
    return b;
  }

  async get(id: string) {
    return this.#byId.get(id);
  }

  async list(filter: CommentFilter, page: Page) {
    const source = filter.articleId ? (this.#byArticle.get(filter.articleId) ?? []) : this.#all;
    if (!filter.status && !filter.search) return source.slice(page.offset, page.offset + page.limit);
    return source.filter((c) => matchesComment(c, filter)).slice(page.offset, page.offset + page.limit);
  }

  async count(filter: CommentFilter) {
    const source = filter.articleId ? (this.#byArticle.get(filter.articleId) ?? []) : this.#all;
    if (!filter.status && !filter.search) return source.length;
    return source.reduce((n, c) => (matchesComment(c, filter) ? n + 1 : n), 0);
  }

  async insert(comment: Comment) {
    const stored = { ...comment };
    const old = this.#byId.get(stored.id);
    if (old) this.#forget(old);
    this.#list(stored);
    const b = bucketOf('comments', stored.id);
    this.#buckets.get(b)[stored.id] = stored;
    await this.#buckets.write(b);
  }

  async setStatus(id: string, status: Comment['status']) {
    const comment = this.#byId.get(id);
    if (!comment) return undefined;
    comment.status = status;
    await this.#buckets.write(bucketOf('comments', id));
    return { ...comment };
  }

  async delete(id: string) {
    const comment = this.#byId.get(id);
    if (!comment) return false;
    await this.#buckets.write(this.#forget(comment));
    return true;
  }

  async deleteForArticle(articleId: string) {
    const list = this.#byArticle.get(articleId);
    if (!list) return;
    const touched = new Set<number>();
    for (const comment of [...list]) touched.add(this.#forget(comment));
    await Promise.all([...touched].map((b) => this.#buckets.write(b)));
  }

  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}

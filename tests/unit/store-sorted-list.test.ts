/** The chunked sorted list behind the article listings agrees with a plain sorted array through any mix of inserts and removes. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SortedList } from '../../src/store/lowdb/sorted-list.ts';

type Item = { key: number; id: number };
const compare = (a: Item, b: Item) => a.key - b.key || a.id - b.id;

describe('SortedList', () => {
  it('matches a sorted array through random inserts and removes, across chunk splits', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 300 })), { minLength: 1, maxLength: 4000 }), (ops) => {
        const list = new SortedList<Item>(compare);
        let model: Item[] = [];
        let id = 0;
        for (const [add, key] of ops) {
          if (add || model.length === 0) {
            const item = { key, id: id++ };
            list.insert(item);
            model.push(item);
            model.sort(compare);
          } else {
            const victim = model[key % model.length]!;
            expect(list.remove(victim)).toBe(true);
            model = model.filter((m) => m !== victim);
          }
        }
        expect(list.length).toBe(model.length);
        expect([...list]).toEqual(model);
        expect(list.slice(5, 17)).toEqual(model.slice(5, 17));
        expect(list.slice(Math.max(0, model.length - 3))).toEqual(model.slice(Math.max(0, model.length - 3)));
        expect(list.remove({ key: -1, id: -1 })).toBe(false);
      }),
      { numRuns: 40 },
    );
  });

  it('starts from a sorted array and pages across chunk boundaries', () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({ key: i, id: i }));
    const list = new SortedList(compare, items);
    expect(list.slice(500, 530)).toEqual(items.slice(500, 530));
    expect(list.slice(2990, 5000)).toEqual(items.slice(2990));
    list.insert({ key: 511, id: -1 });
    expect(list.slice(510, 514).map((i) => i.id)).toEqual([510, -1, 511, 512]);
  });

  it('finds a range bound by binary search, across chunks', () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({ key: Math.floor(i / 3), id: i }));
    const list = new SortedList(compare, items);
    for (const k of [-1, 0, 1, 170, 171, 512, 999, 1000, 2000])
      expect(
        list.firstIndex((item) => item.key >= k),
        String(k),
      ).toBe(items.findIndex((item) => item.key >= k) === -1 ? 3000 : items.findIndex((item) => item.key >= k));
    expect(new SortedList(compare).firstIndex(() => true)).toBe(0);
  });
});

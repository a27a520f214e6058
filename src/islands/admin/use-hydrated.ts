/** True once the island has hydrated: its root carries data-hydrated so scripts (and tests) know clicks reach React. */
import { useEffect, useState } from 'react';

export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}

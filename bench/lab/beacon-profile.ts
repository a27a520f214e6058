/**
 * Where a page-view beacon's server CPU goes (issue 33): runs the built server with --cpu-prof, sends
 * 10 s of beacons (autocannon, 50 connections), stops it and prints the self time by module and the
 * top functions. `OUT_DIR=.out/test node bench/lab/beacon-profile.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beaconRequest, seedStories, startBeaconServer } from '../beacon-server.ts';
import { runLoad } from '../children.ts';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number };
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

const { dataDir } = await seedStories(1);
const profDir = path.join(dataDir, 'profile');
const server = await startBeaconServer(dataDir, { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` });
const result = await runLoad({ ...beaconRequest(server.url, { path: '/article/bench-story-0' }), connections: 50, durationS: 10 });
await server.stop();
const file = fs.readdirSync(profDir).find((name) => name.endsWith('.cpuprofile'))!;
const profile = JSON.parse(fs.readFileSync(path.join(profDir, file), 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const group = (key: (n: Node) => string) => {
  const sums = new Map<string, number>();
  for (const [id, us] of self) sums.set(key(byId.get(id)!), (sums.get(key(byId.get(id)!)) ?? 0) + us);
  return [...sums].sort((a, b) => b[1] - a[1]);
};
const moduleOf = (n: Node) => {
  const url = n.callFrame.url;
  if (!url) return `(${n.callFrame.functionName || 'native'})`;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.includes('/server/chunks/') || url.includes('/server/entry')) return 'astro bundle (our code and Astro)';
  return url.replace(/^.*\/(src|scripts)\//, '$1/').replace(/^node:/, 'node:');
};
console.log(`${result.ok} beacons in 10 s (${Math.round(result.rps)}/s); ${(total / 1000).toFixed(0)} ms sampled on the main thread`);
console.log('\nself time by module:');
for (const [name, us] of group(moduleOf).slice(0, 15)) console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
console.log('\ntop functions:');
for (const [name, us] of group((n) => `${n.callFrame.functionName || '(anonymous)'} ${moduleOf(n)}:${n.callFrame.lineNumber}`).slice(0, 25))
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
fs.rmSync(dataDir, { recursive: true, force: true });
fs.rmSync(server.clientDir, { recursive: true, force: true });
process.exit(0);

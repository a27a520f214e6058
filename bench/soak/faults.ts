/**
 * The faults of issue 31, each started and ended on cue while the mix runs: PostgreSQL stopped and
 * started (pg_ctl), the disk of the data and served folders full, the mail server stalling and dropping
 * mid-briefing, hostile peers (a trickling feed, an endless one, a hanging PURGE_URL), a server SIGKILLed,
 * Pagefind killed mid-index. Clock jumps (item 5) need the server's clock module and are left to its tests.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { postgresBinDir, type Cluster } from '../../tests/helpers/postgres.ts';
import type { Ledger } from './ledger.ts';
import type { SoakFeeds, SoakSmtp } from './peers.ts';
import { childProcessesNamed } from '../process-tree.ts';
import type { Disk, SoakServer } from './servers.ts';
import type { Mix } from './traffic.ts';

export type Store = 'lowdb' | 'pg';

export type FaultContext = {
  store: Store;
  servers: SoakServer[];
  disk: Disk;
  cluster: Cluster | undefined;
  smtp: SoakSmtp;
  subscribers: number;
  feeds: SoakFeeds;
  ledger: Ledger;
  mix: Mix;
  /** Asks server A to send today's briefing (as `npm run briefing` does); the call is not awaited here. */
  startBriefing: () => void;
  say: (line: string) => void;
};

export type Fault = {
  name: FaultName;
  /** The item of issue 31 it exercises. */
  item: string;
  /** Why it cannot run here, or undefined. */
  skip: (context: FaultContext) => string | undefined;
  start: (context: FaultContext) => Promise<void>;
  /** Halfway through (the mail fault turns from holding DATA to holding greetings). */
  middle?: (context: FaultContext) => Promise<void>;
  stop: (context: FaultContext) => Promise<void>;
  /** What it did, for the results. */
  details: Record<string, unknown>;
};

export const FAULT_NAMES = ['pg-stop', 'disk-full', 'smtp-stall', 'slow-peers', 'kill', 'search-kill'] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

/** pg_ctl as the cluster's owner: `-m fast`, as an operator stops a database (the tests' halt is `immediate`). */
function stopPostgresFast(cluster: Cluster): void {
  const pgCtl = path.join(postgresBinDir()!, 'pg_ctl');
  const args = ['-D', path.join(cluster.dir, 'data'), '-m', 'fast', '-w', 'stop'];
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', pgCtl, ...args], { stdio: 'pipe' });
  else execFileSync(pgCtl, args, { stdio: 'pipe' });
}

/** A fresh set of faults (each keeps what it did in `details`). */
export function createFaults(): Record<FaultName, Fault> {
  let searchKiller: NodeJS.Timeout | undefined;
  return {
    'pg-stop': {
      name: 'pg-stop',
      item: '1. database restart and outage',
      details: {},
      skip: (c) => (c.store === 'pg' ? undefined : 'lowdb has no database server'),
      start: async (c) => {
        const t0 = performance.now();
        stopPostgresFast(c.cluster!);
        c.say(`  PostgreSQL stopped (pg_ctl stop -m fast, ${Math.round(performance.now() - t0)} ms)`);
      },
      stop: async (c) => {
        const t0 = performance.now();
        c.cluster!.resume();
        c.say(`  PostgreSQL started again (${Math.round(performance.now() - t0)} ms)`);
      },
    },
    'disk-full': {
      name: 'disk-full',
      item: '2. full disk',
      details: {},
      skip: (c) => (c.disk.tmpfs ? undefined : 'needs root to mount a tmpfs for the data and served folders'),
      async start(c) {
        const bytes = c.disk.fill();
        this.details.filledMB = Math.round(bytes / 1048576);
        c.say(`  the disk of the data and served folders is full (${this.details.filledMB} MB written)`);
      },
      stop: async (c) => {
        c.disk.free();
        c.say('  space freed');
      },
    },
    'smtp-stall': {
      name: 'smtp-stall',
      item: '3. mail server faults',
      details: {},
      skip: () => undefined,
      async start(c) {
        // The first third of the briefing goes out; then the mail server takes each message and never answers.
        const after = c.smtp.accepted() + Math.max(5, Math.floor(c.subscribers / 3));
        c.smtp.holdDataAfter(after);
        c.startBriefing();
        c.say(`  briefing started; the mail server holds every DATA answer after message ${after}`);
      },
      async middle(c) {
        this.details.droppedAfterData = c.smtp.dropHeld();
        c.smtp.holdGreetings(true);
        c.say(`  dropped ${this.details.droppedAfterData} connection(s) waiting after DATA; new connections get no greeting`);
      },
      async stop(c) {
        this.details.greetingsHeld = c.smtp.stats.greetingsHeld;
        c.smtp.holdGreetings(false);
        c.smtp.dropHeld();
        c.say(`  the mail server answers again (${this.details.greetingsHeld} greeting(s) had been held)`);
      },
    },
    'slow-peers': {
      name: 'slow-peers',
      item: '4. slow and hostile peers',
      details: {},
      skip: () => undefined,
      async start(c) {
        c.feeds.setHostile(true);
        this.details.startedAt = performance.now();
        c.say('  one feed trickles, another never ends, PURGE_URL hangs');
        // A publish while PURGE_URL hangs: its pages must still go live.
        await c.mix.publishNow();
      },
      async stop(c) {
        c.feeds.setHostile(false);
        this.details.stillOpenAtEnd = c.feeds.endHostile();
        // The healthy feed's fetches meanwhile: the longest gap between two (the schedule is every 15 s).
        const from = this.details.startedAt as number;
        delete this.details.startedAt;
        const during = [from, ...c.feeds.wireRequests.filter((t) => t >= from), performance.now()];
        this.details.wireFetches = during.length - 2;
        this.details.wireLongestGapS = Math.round(Math.max(...during.slice(1).map((t, i) => t - during[i]!)) / 100) / 10;
        c.say(`  peers behave again (${this.details.stillOpenAtEnd} hostile answer(s) were still open)`);
      },
    },
    kill: {
      name: 'kill',
      item: '6. a server that dies mid-job',
      details: {},
      skip: () => undefined,
      async start(c) {
        // lowdb: the only server, restarted on its data folder as systemd would (RestartSec=2s). PostgreSQL: the
        // second of two, killed right after a publish (its render job may be the killed server's), back at the end.
        const victim = c.store === 'pg' ? c.servers[1]! : c.servers[0]!;
        const onlyServer = c.store !== 'pg';
        if (!onlyServer) void c.mix.publishNow();
        await new Promise((resolve) => setTimeout(resolve, onlyServer ? 0 : 150));
        const window = { server: victim.name, from: performance.now(), onlyServer };
        c.ledger.downWindows.push(window);
        this.details.killedPid = victim.pid();
        await victim.kill();
        c.say(`  SIGKILL ${victim.name} (pid ${this.details.killedPid})`);
        if (onlyServer) {
          await new Promise((resolve) => setTimeout(resolve, 2000));
          this.details.restartS = await victim.start();
          Object.assign(window, { to: performance.now() });
          this.details.downS = Math.round((performance.now() - window.from) / 100) / 10;
          c.say(
            `  ${victim.name} restarted on the same data folder: listening ${this.details.restartS} s after spawn, ${this.details.downS} s down`,
          );
        } else {
          await c.mix.publishNow();
        }
      },
      async stop(c) {
        if (c.store !== 'pg') return;
        const victim = c.servers[1]!;
        const window = c.ledger.downWindows.findLast((w) => w.server === victim.name)!;
        this.details.restartS = await victim.start();
        window.to = performance.now();
        this.details.downS = Math.round((performance.now() - window.from) / 100) / 10;
        c.say(`  ${victim.name} back: listening ${this.details.restartS} s after spawn, ${this.details.downS} s down`);
      },
    },
    'search-kill': {
      name: 'search-kill',
      item: '7. search indexer crash',
      details: {},
      skip: () => undefined,
      async start(c) {
        const killed: number[] = [];
        this.details.killed = killed;
        searchKiller = setInterval(() => {
          const parents = c.servers.map((s) => s.pid()).filter((pid): pid is number => pid !== undefined);
          for (const pid of parents.flatMap((parent) => childProcessesNamed('pagefind', parent))) {
            try {
              process.kill(pid, 'SIGKILL');
              killed.push(pid);
            } catch {
              // It finished first.
            }
          }
        }, 25);
        c.say('  every Pagefind process the servers start is SIGKILLed');
        await c.mix.publishNow();
      },
      async middle(c) {
        await c.mix.publishNow();
      },
      async stop(c) {
        clearInterval(searchKiller);
        this.details.endedAt = new Date().toISOString();
        const killed = this.details.killed as number[];
        this.details.kills = killed.length;
        delete this.details.killed;
        c.say(`  Pagefind left alone again (${killed.length} indexer process(es) killed)`);
      },
    },
  };
}

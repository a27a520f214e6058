/**
 * Progress of a long script step (backup, restore; rebuild and db:* may follow): a bar with counts
 * and time left when stdout is a terminal (cli-progress), a plain line every tenth with the time left
 * otherwise (CI logs).
 */
import cliProgress from 'cli-progress';

export type ProgressReporter = {
  /** `done` of `total` items of `step` (a new step name starts a new bar). */
  update(step: string, done: number, total: number): void;
  /** Ends the current bar (call before printing anything else). */
  stop(): void;
};

export function createProgress(label: string, unit = 'files', stream: NodeJS.WriteStream = process.stdout): ProgressReporter {
  let step: string | undefined;
  let bar: cliProgress.SingleBar | undefined;
  let lastTenth = -1;
  let stepStarted = 0;
  const stop = () => {
    bar?.stop();
    bar = undefined;
  };
  return {
    update(name, done, total) {
      if (name !== step) {
        stop();
        step = name;
        lastTenth = -1;
        stepStarted = performance.now();
        if (stream.isTTY) {
          bar = new cliProgress.SingleBar(
            {
              stream,
              format: `${label} ${name.padEnd(9)} [{bar}] {value}/{total} ${unit} | {percentage}% | {eta_formatted} left`,
              etaBuffer: 200,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total, 0);
        }
      }
      if (bar) {
        bar.update(done);
        return;
      }
      const tenth = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        // Time left at the pace so far (none before the first item, or once done).
        const spent = (performance.now() - stepStarted) / 1000;
        const left = done > 0 && done < total ? `, about ${Math.ceil((spent / done) * (total - done))} s left` : '';
        stream.write(`${label} ${name}: ${done}/${total} ${unit} (${tenth * 10}%${left})\n`);
      }
    },
    stop,
  };
}

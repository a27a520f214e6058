/**
 * `npm run audit`: fails on a high or critical advisory in production dependencies. When the
 * registry's advisory service cannot be reached (some mirrors answer 405), it says so plainly and
 * exits 0: an unreachable service is not a clean bill of health, and the message says that too.
 */
import { spawnSync } from 'node:child_process';

const result = spawnSync('npm', ['audit', '--omit=dev', '--json'], { encoding: 'utf8', shell: false });
let report: {
  statusCode?: number;
  message?: string;
  metadata?: { vulnerabilities?: Record<string, number> };
  vulnerabilities?: Record<string, { severity: string; name: string }>;
};
try {
  report = JSON.parse(result.stdout || '{}');
} catch {
  console.error(`npm audit printed no JSON:\n${result.stdout}\n${result.stderr}`);
  process.exit(1);
}
if (report.statusCode !== undefined || (report.message && !report.metadata)) {
  console.warn(`npm audit: the advisory service is unavailable here (${report.message ?? report.statusCode}); NO advisories were checked.`);
  process.exit(0);
}
const counts = report.metadata?.vulnerabilities ?? {};
const serious = (counts.high ?? 0) + (counts.critical ?? 0);
const names = Object.values(report.vulnerabilities ?? {})
  .filter((v) => v.severity === 'high' || v.severity === 'critical')
  .map((v) => `${v.name} (${v.severity})`);
console.log(`npm audit (production dependencies): ${JSON.stringify(counts)}`);
if (serious > 0) {
  console.error(`High or critical advisories: ${names.join(', ')}`);
  process.exit(1);
}

/**
 * Cancel soak: 20 cancels of running 2- and 4-worker gridnav runs through the API and 10
 * Ctrl-C's (SIGINT to the process group) of `evalctl run`, at varying moments. Prints one line
 * per cancel and the totals: CRASHED episodes (should be 0), runs not CANCELLED, runs whose
 * aggregates count cancelled episodes, processes left behind. Exit 1 when any is non-zero.
 * Needs a build (`npm run build`). Run: `node --import tsx bench/cancel-soak.ts [apiCount] [sigintCount]`.
 */
import { apiCancelDrill, describeDrill, sigintDrill, type CancelMoment, type DrillResult } from './cancel-drill.js';

const apiCount = Number(process.argv[2] ?? 20);
const sigintCount = Number(process.argv[3] ?? 10);

/** Cancel moments cycling over: while the first episodes run, and after 1–3 have finished, with a varying extra delay. */
const moment = (i: number): CancelMoment => ({ afterEpisodes: i % 4, delayMs: (i * 37) % 150 });
const plan = (n: number) => Array.from({ length: n }, (_, i) => ({ workers: i % 2 === 0 ? 2 : 4, moment: moment(i) }));

const print = (r: DrillResult) => console.log(describeDrill(r));
const t0 = Date.now();
const api = await apiCancelDrill({ plan: plan(apiCount), onResult: print });
const cli = await sigintDrill({ plan: plan(sigintCount), onResult: print });
const all = [...api, ...cli];
const sum = (rs: DrillResult[], f: (r: DrillResult) => number) => rs.reduce((a, r) => a + f(r), 0);
const totals = {
  cancels: all.length,
  crashedEpisodes: sum(all, (r) => r.crashed),
  cancelledEpisodes: sum(all, (r) => r.endings.CANCELLED ?? 0),
  runsWithCrashed: all.filter((r) => r.crashed > 0).length,
  runsNotCancelled: all.filter((r) => r.status !== 'CANCELLED' || r.error !== null).length,
  aggregatesWithCancelled: all.filter((r) => !r.aggregatesFinishedOnly).length,
  leftoverProcesses: sum(all, (r) => r.leftovers.length),
  cliExitNot130: cli.filter((r) => r.exitCode !== 130).length,
};
console.log(
  `\napi: ${api.length} cancels, ${sum(api, (r) => r.crashed)} CRASHED episodes; sigint: ${cli.length} cancels, ${sum(cli, (r) => r.crashed)} CRASHED episodes`,
);
console.log(JSON.stringify(totals));
console.log(`took ${Math.round((Date.now() - t0) / 1000)} s`);
const bad =
  totals.crashedEpisodes + totals.runsNotCancelled + totals.aggregatesWithCancelled + totals.leftoverProcesses + totals.cliExitNot130;
process.exit(bad === 0 ? 0 : 1);

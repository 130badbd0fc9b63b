import type { ScenarioOutcome } from "./AccuracyRun.ts"
import type { AccuracyReport } from "./TruthComparison.ts"

/** The counts of a report, without the list of disagreements. */
export type ReportFigures = Omit<AccuracyReport, "disagreements">

/** How many disagreements a scenario's line lists (all are counted). */
const listedDisagreements = 10

/** One scenario as a JSON object for its output line: the store, its counts and its first disagreements. */
export const scenarioLine = (outcome: ScenarioOutcome): Record<string, unknown> => {
  const { disagreements, ...figures } = outcome.report
  return {
    scenario: outcome.store,
    durable: outcome.durable,
    runs: outcome.runs,
    ...(outcome.failure === undefined ? {} : { failure: outcome.failure }),
    ...figures,
    disagreements: disagreements.slice(0, listedDisagreements),
  }
}

/**
 * The counts of every scenario added up (each scenario compares its own service with the same cluster, so
 * `gpus` is the fleet's readable GPUs times the scenarios), `converged_s` the slowest scenario's (null when
 * one did not converge), and `scenarios` the stores compared.
 */
export const totalsOf = (outcomes: ReadonlyArray<ScenarioOutcome>): ReportFigures & { scenarios: string[] } => {
  const sum = (figure: (report: AccuracyReport) => number) =>
    outcomes.reduce((total, outcome) => total + figure(outcome.report), 0)
  const converged = outcomes.map((outcome) => outcome.report.converged_s)
  return {
    gpus: sum((report) => report.gpus),
    unreadable_gpus: sum((report) => report.unreadable_gpus),
    gpus_at_true_location: sum((report) => report.gpus_at_true_location),
    wrong_location_at_end: sum((report) => report.wrong_location_at_end),
    true_moves: sum((report) => report.true_moves),
    moved_reported: sum((report) => report.moved_reported),
    missed_moves: sum((report) => report.missed_moves),
    unreportable_moves: sum((report) => report.unreportable_moves),
    false_moved: sum((report) => report.false_moved),
    repeated_moved: sum((report) => report.repeated_moved),
    gpus_gone: sum((report) => report.gpus_gone),
    removed_reported: sum((report) => report.removed_reported),
    missed_removed: sum((report) => report.missed_removed),
    unreportable_removals: sum((report) => report.unreportable_removals),
    false_removed: sum((report) => report.false_removed),
    duplicate_added: sum((report) => report.duplicate_added),
    false_added: sum((report) => report.false_added),
    true_health_changes: sum((report) => report.true_health_changes),
    health_reported: sum((report) => report.health_reported),
    missed_health: sum((report) => report.missed_health),
    unreportable_health: sum((report) => report.unreportable_health),
    false_health: sum((report) => report.false_health),
    wrong_health_at_end: sum((report) => report.wrong_health_at_end),
    converged_s: converged.some((seconds) => seconds === null)
      ? null
      : Math.max(0, ...converged.map((seconds) => seconds ?? 0)),
    events: {
      added: sum((report) => report.events.added),
      moved: sum((report) => report.events.moved),
      removed: sum((report) => report.events.removed),
      observed: sum((report) => report.events.observed),
      health: sum((report) => report.events.health),
    },
    scenarios: outcomes.map((outcome) => outcome.store),
  }
}

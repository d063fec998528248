import BlockingIO
import CountdownMaintenance
import CountdownStore
import Foundation
import Lifecycle
import Telemetry

/// The fleet's restore detection (SPEC 12.4), every few seconds: reads PostgreSQL's newest ledger time
/// (`countdown_ledger_clock`) and checks it against the fleet's watermark in Redis (`LedgerWatermark`), which it moves
/// forward. PostgreSQL more than 60 s behind means the database went back in time (a restore, a failover to a
/// replica that lagged): the whole fleet stops claiming starts, backfills and reminders (`heldKinds`), the readiness
/// probe fails and the log says why, until `countdown-admin restore-guard` has run (or `--none` cleared it). Updates
/// and ends go on. A normal restart finds PostgreSQL at the watermark and changes nothing.
public final class LedgerWatermarkService: PeriodicService {
    public let name = "ledger-watermark"
    private let database: StoreClient
    private let watermark: LedgerWatermark
    private let workerID: String
    private let interval: Duration
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let state = Locked<LedgerWatermark.Verdict?>(nil)

    public init(database: StoreClient, watermark: LedgerWatermark, workerID: String, interval: Duration = .seconds(5), metrics: WorkerMetrics,
                logger: Logger) {
        self.database = database
        self.watermark = watermark
        self.workerID = workerID
        self.interval = interval
        self.metrics = metrics
        self.logger = logger.with(["component": "restore-guard"])
    }

    /// The kinds the dispatcher must not claim now: empty once a check found the fleet not tripped; held until the
    /// first check succeeded, so a worker started on a restored database sends nothing before it has looked.
    public var heldKinds: Set<String> { state.withLock { $0?.tripped == false } ? [] : LedgerWatermark.heldKinds }

    /// The readiness problem while tripped (nil otherwise).
    public var problem: String? {
        guard let verdict = state.withLock({ $0 }), verdict.tripped else { return nil }
        return "the database went back in time (\(verdict.record ?? "PostgreSQL's start ledger is behind the fleet's watermark")): "
            + "starts, backfills and reminders are held; run countdown-admin restore-guard --since <backup time> --yes "
            + "(or restore-guard --none --yes if nothing was lost)"
    }

    /// One check; keeps the last verdict when PostgreSQL or Redis cannot be reached (the dispatcher fails on its own then).
    public func runOnce() async -> Duration? {
        do {
            let clock = try await database.withConnection { try RestoreGuardQueries.ledgerClock(on: $0) }
            let lag = Int((clock.now.timeIntervalSince(clock.newest)).rounded())
            let record = "found by worker \(workerID) at \(TimeArgument.format(clock.now)): PostgreSQL's newest ledger time \(TimeArgument.format(clock.newest))"
            var verdict = try await watermark.check(postgresNewest: clock.newest, record: record)
            if verdict.tripped, let mark = verdict.watermark, verdict.record == record {
                verdict.record = record + " is \(Int(mark.timeIntervalSince(clock.newest).rounded())) s behind the fleet's watermark \(TimeArgument.format(mark))"
            }
            let previous = state.withLock { previous -> LedgerWatermark.Verdict? in
                defer { previous = verdict }
                return previous
            }
            metrics.restoreGuardTripped.set(verdict.tripped ? 1 : 0)
            if verdict.tripped && previous?.tripped != true {
                logger.error("the database went back in time: holding starts, backfills and reminders until countdown-admin restore-guard runs", [
                    "record": .string(verdict.record ?? ""), "ledger_age_s": .int(lag),
                    "held_kinds": .string(LedgerWatermark.heldKinds.sorted().joined(separator: ",")),
                ])
            } else if !verdict.tripped && previous?.tripped == true {
                logger.warn("the restore guard ran: claiming starts, backfills and reminders again")
            }
        } catch {
            logger.warn("could not compare the ledger's clock with the fleet's watermark", ["error": .error(error)])
        }
        return interval
    }
}

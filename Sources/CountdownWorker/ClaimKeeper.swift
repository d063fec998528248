import CountdownFlows
import CountdownStore
import Lifecycle
import Telemetry

/// Keeps this worker's start-ledger claims alive: every quarter of `seconds`, extends the rows it holds (claimed
/// and not yet recorded) to `seconds` from now, so a fan-out or a settlement that takes long (a large stream,
/// PostgreSQL away for a while) never lets another sender take rows this worker is still pushing or recording;
/// and gives back its expired claims on rows it no longer holds. Also exports how many outcomes wait in memory.
public final class ClaimKeeper: PeriodicService {
    public let name = "claim_keeper"
    private let owner: String
    private let database: any WorkerServiceData
    private let settler: StartSettler
    private let seconds: Int
    private let metrics: WorkerMetrics
    private let logger: Logger

    public init(owner: String, database: any WorkerServiceData, settler: StartSettler, seconds: Int, metrics: WorkerMetrics, logger: Logger) {
        self.owner = owner
        self.database = database
        self.settler = settler
        self.seconds = seconds
        self.metrics = metrics
        self.logger = logger.with(["component": "claim_keeper"])
    }

    public func runOnce() async -> Duration? {
        metrics.unsettledStarts.set(Double(await settler.unsettled))
        let (owner, seconds) = (self.owner, self.seconds)
        let held = await settler.heldRows
        let releasing = await settler.takeReleasing()
        do {
            let kept = try await database.keepClaims(owner: owner, held: held, releasing: releasing, seconds: seconds)
            await settler.release(kept.waiting)
            metrics.claimsExtended.increment(labels: "ok")
            if kept.released > 0 { logger.warn("gave back claims this worker no longer holds", ["rows": .int(kept.released)]) }
        } catch {
            await settler.release(releasing)
            metrics.claimsExtended.increment(labels: "error")
            logger.warn("could not extend this worker's claims", ["error": .error(error)])
        }
        return .milliseconds(max(250, seconds * 250))
    }
}

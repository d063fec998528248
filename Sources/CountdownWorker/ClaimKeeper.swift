import CountdownFlows
import CountdownStore
import Postgres
import Telemetry

/// Keeps this worker's start-ledger and session end claims alive: extends them to `seconds` from now every
/// quarter of that, so a fan-out or a settlement that takes long (a large stream, PostgreSQL away for a while)
/// never lets another sender take rows this worker is still pushing or recording. Also exports how many start
/// outcomes wait in memory.
public final class ClaimKeeper: Service {
    public let name = "claim_keeper"
    private let owner: String
    private let database: PostgresClient
    private let settler: StartSettler
    private let seconds: Int
    private let metrics: WorkerMetrics
    private let logger: Logger

    public init(owner: String, database: PostgresClient, settler: StartSettler, seconds: Int, metrics: WorkerMetrics, logger: Logger) {
        self.owner = owner
        self.database = database
        self.settler = settler
        self.seconds = seconds
        self.metrics = metrics
        self.logger = logger.with(["component": "claim_keeper"])
    }

    public func run(shutdown: ShutdownSignal) async throws {
        let every = Duration.milliseconds(max(250, seconds * 250))
        while !shutdown.isTriggered {
            await shutdown.sleep(for: every)
            metrics.unsettledStarts.set(Double(await settler.unsettled))
            let (owner, seconds) = (self.owner, self.seconds)
            do {
                _ = try await database.withConnection { try ClaimStore.extend(owner: owner, seconds: seconds, on: $0) }
                metrics.claimsExtended.increment(labels: "ok")
            } catch {
                metrics.claimsExtended.increment(labels: "error")
                logger.warn("could not extend this worker's claims", ["error": .error(error)])
            }
        }
        // Outcomes still in memory are written before the process goes, if PostgreSQL lets them.
        await settler.drain(within: .seconds(5))
    }
}

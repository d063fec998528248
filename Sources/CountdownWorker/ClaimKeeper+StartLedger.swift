import CountdownFlows
import CountdownStore
import Telemetry

extension ClaimKeeper {
    /// Keeps this worker's start-ledger claims alive: extends the rows it holds (claimed and not yet recorded), so a
    /// fan-out or a settlement that takes long never lets another sender take rows this worker is still pushing or
    /// recording; and gives back its expired claims on rows it no longer holds. Also exports how many outcomes wait
    /// in memory.
    public static func startLedger(owner: String, database: StoreClient, settler: StartSettler, seconds: Int, metrics: WorkerMetrics,
                                   logger: Logger) -> ClaimKeeper {
        let logger = logger.with(["component": "claim_keeper"])
        return ClaimKeeper(name: "claim_keeper", seconds: seconds) {
            metrics.unsettledStarts.set(Double(await settler.unsettled))
            let held = await settler.heldRows
            let releasing = await settler.takeReleasing()
            do {
                let kept = try await database.transaction {
                    try StartLedger.keepClaims(owner: owner, held: held, releasing: releasing, seconds: seconds, on: $0)
                }
                await settler.release(kept.waiting)
                metrics.claimsExtended.increment(labels: "ok")
                if kept.released > 0 { logger.warn("gave back claims this worker no longer holds", ["rows": .int(kept.released)]) }
            } catch {
                await settler.release(releasing)
                metrics.claimsExtended.increment(labels: "error")
                logger.warn("could not extend this worker's claims", ["error": .error(error)])
            }
            return true
        }
    }
}

import BlockingIO
import CountdownDomain
import CountdownStore
import PushPayloads
import Telemetry

/// What every handler needs: the stores, the push gateway, payload builders, settings, metrics and logs.
public struct FlowContext: Sendable {
    /// Where the handlers run their store calls (the flows never see PostgreSQL itself).
    public let database: StoreClient
    public let push: any PushGateway
    public let payloads: PushPayloadBuilder
    public let settings: FlowSettings
    public let transport: PushTransportKind
    public let metrics: any FlowMetrics
    public let logger: Logger
    /// How long start-ledger rows and session end claims stay claimed by one sender without being extended.
    public let claimSeconds: Int
    /// This worker's id and the fleet's liveness, for claims.
    public let liveness: any WorkerLiveness
    /// Writes start outcomes as they arrive, for every fan-out of the process: a service of the worker's group,
    /// which must run for start fan-outs to finish.
    public let settler: StartSettler
    /// Most ledger rows one start fan-out claims and sends at a time.
    public let startPageSize: Int
    /// Where end jobs that the push service refused wait for it to accept again.
    public let endRecovery: any EndRecoveryWaits

    public init(database: StoreClient, settler: StartSettler, push: any PushGateway, payloads: PushPayloadBuilder, settings: FlowSettings,
                transport: PushTransportKind, metrics: any FlowMetrics, logger: Logger, claimSeconds: Int = 30,
                liveness: any WorkerLiveness = AnonymousWorker(), startPageSize: Int = 1000,
                endRecovery: any EndRecoveryWaits = BackoffOnlyEnds()) {
        self.database = database
        self.push = push
        self.payloads = payloads
        self.settings = settings
        self.transport = transport
        self.metrics = metrics
        self.logger = logger
        self.claimSeconds = claimSeconds
        self.liveness = liveness
        self.settler = settler
        self.startPageSize = max(1, startPageSize)
        self.endRecovery = endRecovery
    }

    /// Reads the other workers holding claims (`read`) and sorts them by liveness; this worker counts as alive.
    func claimOwners(_ read: @escaping @Sendable (StoreConnection) throws -> [String]) async throws -> (dead: [String], alive: [String]) {
        try await claimOwners { connection in (try read(connection), ()) }.owners
    }

    /// `claimOwners` with something else `read` learned from the same statement.
    func claimOwners<Extra: Sendable>(_ read: @escaping @Sendable (StoreConnection) throws -> ([String], Extra)) async throws
        -> (owners: (dead: [String], alive: [String]), extra: Extra) {
        let (owners, extra) = try await database.withConnection(read)
        guard let me = liveness.workerID else { return (([], []), extra) }
        guard !owners.isEmpty else { return (([], [me]), extra) }
        let sorted = await liveness.classify(owners)
        return ((sorted.dead, sorted.alive + [me]), extra)
    }

    /// Runs `body` in a transaction that claims ledger rows and records them in `claimed`. When the transaction
    /// fails, its commit may still have gone through: the rows are handed to the settler to give back, so none stays
    /// claimed by a worker that will not push it.
    func releasingClaims<T: Sendable>(_ claimed: Locked<[ClaimStore.Row]>,
                                      _ body: @escaping @Sendable (StoreConnection) throws -> T) async throws -> T {
        do {
            return try await database.transaction(body)
        } catch {
            let rows = claimed.value
            if !rows.isEmpty { await settler.release(rows) }
            throw error
        }
    }
}

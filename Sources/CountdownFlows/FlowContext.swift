import BlockingIO
import CountdownDomain
import CountdownStore
import PushPayloads
import Telemetry

/// Every store seam the handlers reach the database through (`StoreClient` is the one the worker passes).
public typealias FlowStores = StartClaims & SessionDeliveries & ReminderDeliveries & AndroidCountdownDeliveries & StreamWindows

/// What every handler needs: the stores, the push gateway, payload builders, settings, metrics and logs.
public struct FlowContext: Sendable {
    /// The start fan-out's store calls (the flows never see PostgreSQL, a connection or a transaction).
    public let starts: any StartClaims
    /// The session fan-out's: runtime sessions, their end deliveries and updates.
    public let sessions: any SessionDeliveries
    /// The reminder fan-out's.
    public let reminders: any ReminderDeliveries
    /// The Android countdown fan-out's.
    public let androidCountdowns: any AndroidCountdownDeliveries
    /// The backfill's and the expiry's.
    public let streams: any StreamWindows
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
    /// `APNS_BROADCAST=on`: a channel per stream (SPEC 12.5); nil: token pushes only.
    public let broadcast: BroadcastSetup?

    public init(database: some FlowStores, settler: StartSettler, push: any PushGateway, payloads: PushPayloadBuilder, settings: FlowSettings,
                transport: PushTransportKind, metrics: any FlowMetrics, logger: Logger, claimSeconds: Int = 30,
                liveness: any WorkerLiveness, startPageSize: Int = 1000,
                endRecovery: any EndRecoveryWaits, broadcast: BroadcastSetup? = nil) {
        starts = database
        sessions = database
        reminders = database
        androidCountdowns = database
        streams = database
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
        self.broadcast = broadcast
    }

    /// Reads the other workers holding claims (`read`) and sorts them by liveness; this worker counts as alive.
    func claimOwners(_ read: () async throws -> [String]) async throws -> (dead: [String], alive: [String]) {
        try await claimOwners { (try await read(), ()) }.owners
    }

    /// `claimOwners` with something else `read` learned from the same statement.
    func claimOwners<Extra: Sendable>(_ read: () async throws -> ([String], Extra)) async throws
        -> (owners: (dead: [String], alive: [String]), extra: Extra) {
        let (owners, extra) = try await read()
        guard let me = liveness.workerID else { return (([], []), extra) }
        guard !owners.isEmpty else { return (([], [me]), extra) }
        let sorted = await liveness.classify(owners)
        return ((sorted.dead, sorted.alive + [me]), extra)
    }

    /// Runs `body`, a transaction that claims ledger rows and tells each claim to the function it is given. When
    /// the transaction fails, its commit may still have gone through: the rows are handed to the settler to give
    /// back, so none stays claimed by a worker that will not push it.
    func releasingClaims<T: Sendable>(_ body: (@escaping @Sendable ([StartLedger.Key]) -> Void) async throws -> T) async throws -> T {
        let claimed = Locked([StartLedger.Key]())
        do {
            return try await body { rows in claimed.withLock { $0 = rows } }
        } catch {
            let rows = claimed.value
            if !rows.isEmpty { await settler.release(rows) }
            throw error
        }
    }
}

import CountdownDomain
import Postgres
import PushPayloads
import Telemetry

/// What every handler needs: the database, the push gateway, payload builders, settings, metrics and logs.
public struct FlowContext: Sendable {
    public let database: PostgresClient
    public let push: any PushGateway
    public let payloads: PushPayloadBuilder
    public let settings: FlowSettings
    public let transport: PushTransportKind
    public let metrics: any FlowMetrics
    public let logger: Logger
    /// How long start-ledger rows stay claimed by one sender (the job lease).
    public let claimSeconds: Int

    public init(database: PostgresClient, push: any PushGateway, payloads: PushPayloadBuilder, settings: FlowSettings,
                transport: PushTransportKind, metrics: any FlowMetrics, logger: Logger, claimSeconds: Int = 30) {
        self.database = database
        self.push = push
        self.payloads = payloads
        self.settings = settings
        self.transport = transport
        self.metrics = metrics
        self.logger = logger
        self.claimSeconds = claimSeconds
    }
}

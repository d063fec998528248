import CountdownDomain
import CountdownFlows
import CountdownStore
import Postgres
import PushPayloads
import Telemetry

extension FlowContext {
    /// A context on `client` built as a worker builds it, its settler running until the test's database goes.
    init(database client: PostgresClient, push: any PushGateway, payloads: PushPayloadBuilder, settings: FlowSettings,
         transport: PushTransportKind, metrics: any FlowMetrics, logger: Logger, claimSeconds: Int = 30,
         liveness: any WorkerLiveness = AnonymousWorker(), startPageSize: Int = 1000,
         endRecovery: any EndRecoveryWaits = BackoffOnlyEnds(), broadcast: BroadcastSetup? = nil) {
        let store = StoreClient(client)
        let settler = StartSettler(store: store, logger: logger)
        RunningSettlers.start(settler, on: client)
        self.init(database: store, settler: settler, push: push, payloads: payloads, settings: settings, transport: transport,
                  metrics: metrics, logger: logger, claimSeconds: claimSeconds, liveness: liveness, startPageSize: startPageSize,
                  endRecovery: endRecovery, broadcast: broadcast)
    }
}

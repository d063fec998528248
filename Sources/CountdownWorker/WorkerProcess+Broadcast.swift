import BlockingIO
import CountdownFlows
import CountdownMaintenance
import CountdownStore
import DelayQueue
import HTTPClient
import Push
import Redis
import Telemetry

extension WorkerProcess {
    /// The APNs request settings and the fleet's shared provider token (`PUSH_TRANSPORT=apns`): token pushes and
    /// broadcast channels sign with the same key.
    static func apnsCredentials(_ apns: CountdownConfig.APNs, redis: RedisClient, namespace: String, metrics: WorkerMetrics,
                                clock: ServerClock) throws -> (APNsConfiguration, any AccessTokenProviding) {
        let signer = try APNsProviderToken(keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID, now: clock.now, onRefresh: {
            metrics.tokenRefreshes.increment(labels: "apns", "ok")
        })
        let tokens = SharedAPNsProviderToken(signer: signer, redis: redis, namespace: namespace)
        let configuration = APNsConfiguration(keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID, bundleID: apns.bundleID,
                                              environment: apns.environment == .production ? .production : .development,
                                              baseURLOverride: apns.baseURL)
        return (configuration, tokens)
    }

    /// `APNS_BROADCAST=on`: the flows' channel setup and the keeper's service; nil when broadcast is off.
    static func makeBroadcast(config: CountdownConfig, store: StoreClient, redis: RedisClient, metrics: WorkerMetrics,
                              channelMetrics: ChannelMetrics, clock: ServerClock, logger: Logger) throws -> (setup: BroadcastSetup, keeper: ChannelKeeperService)? {
        guard config.broadcast.enabled, let apns = config.apns else { return nil }
        let (configuration, tokens) = try apnsCredentials(apns, redis: redis, namespace: config.namespace, metrics: metrics, clock: clock)
        let http = try HTTPClient(configuration: HTTPClientConfiguration(name: "apns-broadcast", requestTimeout: .seconds(15), maxConnections: 8,
                                                                         caFile: apns.caFile, proxy: config.pushProxy))
        let channels = APNsChannels(configuration: configuration, channelURL: config.broadcast.channelURL, tokens: tokens, http: http, now: clock.now)
        // The queue's retry policy: 2 s doubling to 10 minutes, half of it jittered.
        let policy = RetryPolicy()
        let setup = BroadcastSetup(channels: APNsChannelService(channels: channels), store: store, metrics: channelMetrics,
                                   maxChannels: config.broadcast.maxChannels, maxAttempts: policy.maxAttempts,
                                   backoff: { attempt in
                                       var random = SystemRandomNumberGenerator()
                                       return policy.delay(afterAttempt: attempt, using: &random)
                                   })
        let keeper = ChannelKeeper(setup: setup, store: store, endDismissAfterSeconds: config.flow.endDismissAfterSeconds, logger: logger)
        return (setup, ChannelKeeperService(keeper: keeper, redis: redis, namespace: config.namespace, metrics: channelMetrics, logger: logger))
    }
}

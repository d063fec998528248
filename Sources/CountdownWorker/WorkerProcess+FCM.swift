import CountdownMaintenance
import JWT
import HTTPClient
import Push

extension WorkerProcess {
    /// The FCM transport: for every push with `PUSH_TRANSPORT=fcm`, for reminders with `PUSH_TRANSPORT=apns`.
    static func makeFCMTransport(_ fcm: CountdownConfig.FCM, http client: HTTPClient, metrics: WorkerMetrics, clock: ServerClock) throws -> FCMTransport {
        let account = try ServiceAccount.load(file: fcm.credentialsFile)
        let tokens = try FCMAccessTokenProvider(account: account, http: client, now: clock.now, onRefresh: { succeeded in
            metrics.tokenRefreshes.increment(labels: "fcm", succeeded ? "ok" : "error")
        })
        return FCMTransport(projectID: fcm.projectID ?? account.projectID, baseURL: fcm.baseURL, tokens: tokens, http: client)
    }
}

import CountdownDomain
import CountdownFlows
import Foundation
import Push
import Telemetry

/// The real `PushGateway`: bounds pushes in flight across all fan-outs of this worker (`PUSH_CONCURRENCY`),
/// sends through a transport (FCM, APNs or log, behind the shared rate limit), and counts results and latency.
public final class TransportPushGateway: PushGateway {
    private let transport: any PushTransport
    private let transportName: String
    private let permits: AsyncSemaphore
    private let metrics: WorkerMetrics
    private let logger: Logger

    public init(transport: any PushTransport, transportName: String, concurrency: Int, metrics: WorkerMetrics, logger: Logger) {
        self.transport = transport
        self.transportName = transportName
        permits = AsyncSemaphore(concurrency)
        self.metrics = metrics
        self.logger = logger.with(["component": "push"])
    }

    public func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
        let message: PushMessage
        switch push {
        case .liveActivity(let payload, let fcmToken, let activityToken):
            message = .liveActivity(id: kind.rawValue, fcmToken: fcmToken, activityToken: activityToken,
                                    apnsHeaders: payload.apnsHeaders, apsJSON: payload.apsJSON)
        case .notification(let notification, let fcmToken):
            message = .notification(id: kind.rawValue, fcmToken: fcmToken, title: notification.title, body: notification.body,
                                    data: notification.data)
        }
        let started = ContinuousClock.now
        let result = await permits.withPermit { await transport.send(message) }
        metrics.pushLatency.observe(ContinuousClock.now - started, labels: transportName)
        let delivery = Self.delivery(result, kind: kind)
        metrics.push(kind: kind, delivery: delivery)
        if case .configurationError(let reason) = delivery {
            logger.error("push service configuration error: check credentials and project", ["reason": .string(reason)])
        }
        return delivery
    }

    /// The one place push results become flow decisions. A refused activity token is the push-to-start token
    /// of a start and the runtime token of an update or end.
    static func delivery(_ result: PushResult, kind: PushKind) -> Delivery {
        switch result {
        case .accepted(let name): .accepted(name: name)
        case .tokenRefused(let refusal):
            .tokenRefused(refusal.token == .fcm ? .fcm : (kind == .start ? .pushToStart : .runtime), reason: refusal.reason)
        case .rejected(let reason): .rejected(reason: reason)
        case .retryable(let after, let reason): .retry(after: after, reason: reason)
        case .configurationError(let reason): .configurationError(reason: reason)
        }
    }
}

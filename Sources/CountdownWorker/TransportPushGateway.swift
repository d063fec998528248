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
        await sendBatch([push], kind: kind)[0]
    }

    /// Sends the pushes through the transport as one batch per `PUSH_CONCURRENCY` permits; a batch holds its
    /// permits until its last answer, and every push of it is counted with the batch's latency.
    public func sendBatch(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery] {
        var deliveries: [Delivery] = []
        deliveries.reserveCapacity(pushes.count)
        for start in stride(from: 0, to: pushes.count, by: permits.capacity) {
            let messages = pushes[start..<min(start + permits.capacity, pushes.count)].map { Self.message($0, kind: kind) }
            let started = ContinuousClock.now
            let results = await permits.withPermits(messages.count) { await transport.sendAll(messages) }
            let latency = ContinuousClock.now - started
            var configurationError: String?
            for result in results {
                metrics.pushLatency.observe(latency, labels: transportName)
                let delivery = Self.delivery(result, kind: kind)
                metrics.push(kind: kind, delivery: delivery)
                if case .configurationError(let reason) = delivery { configurationError = reason }
                deliveries.append(delivery)
            }
            if let configurationError {
                logger.error("push service configuration error: check credentials and project", ["reason": .string(configurationError)])
            }
        }
        return deliveries
    }

    static func message(_ push: OutgoingPush, kind: PushKind) -> PushMessage {
        switch push {
        case .liveActivity(let payload, let fcmToken, let activityToken):
            .liveActivity(id: kind.rawValue, fcmToken: fcmToken, activityToken: activityToken,
                          apnsHeaders: payload.apnsHeaders, apsJSON: payload.apsJSON)
        case .notification(let notification, let fcmToken):
            .notification(id: kind.rawValue, fcmToken: fcmToken, title: notification.title, body: notification.body,
                          data: notification.data)
        }
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

import CountdownDomain
import CountdownFlows
import Foundation
import Lifecycle
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

    /// The retry reason of a push left unsent because its job was cancelled.
    static let cancelledReason = "cancelled"

    /// `PUSH_CONCURRENCY` permits free now.
    var permitsAvailable: Int { permits.available }

    public func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
        await sendBatch([push], kind: kind)[0]
    }

    /// Sends the pushes through the transport in batches of at most a quarter of `PUSH_CONCURRENCY` (so a small
    /// setting still keeps several batches in flight). A batch waits for one permit per push; each push gives its
    /// permit back as its answer arrives, so a slow answer holds one permit, not its batch's. Every push of a
    /// batch is counted with the batch's latency. Once the calling task is cancelled nothing more is sent: the
    /// pushes not yet handed to the transport come back as `retry` (`cancelled`).
    public func sendBatch(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery] {
        var deliveries: [Delivery] = []
        deliveries.reserveCapacity(pushes.count)
        let size = max(1, permits.capacity / 4)
        for start in stride(from: 0, to: pushes.count, by: size) {
            let messages = pushes[start..<min(start + size, pushes.count)].map { Self.message($0, kind: kind) }
            let started = ContinuousClock.now
            await permits.acquire(messages.count)
            let held = HeldPermits(messages.count, of: permits)
            if Task.isCancelled {
                // The job was cancelled (the worker is stopping): what is not sent yet stays unsent, to be sent by
                // whichever worker runs the job next.
                held.giveBackRest()
                deliveries.append(contentsOf: repeatElement(Delivery.retry(after: nil, reason: Self.cancelledReason), count: pushes.count - start))
                break
            }
            let results = await transport.sendAll(messages, onAnswer: { held.giveBackOne() })
            held.giveBackRest()
            precondition(results.count == messages.count, "the transport answered \(results.count) of \(messages.count) pushes")
            let latency = ContinuousClock.now - started
            var configurationErrors: [String: Int] = [:]
            for result in results {
                metrics.pushLatency.observe(latency, labels: transportName)
                let delivery = Self.delivery(result, kind: kind)
                metrics.push(kind: kind, delivery: delivery)
                if case .configurationError(let reason) = delivery { configurationErrors[reason, default: 0] += 1 }
                deliveries.append(delivery)
            }
            for (reason, count) in configurationErrors.sorted(by: { $0.key < $1.key }) {
                logger.error("push service configuration error: check credentials and project", ["reason": .string(reason), "pushes": .int(count)])
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
                          data: notification.data, options: NotificationOptions(notification.delivery))
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

import BlockingIO
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
    private let notificationsShareEndService: Bool
    private let endServiceAccepted = Locked(0)
    /// A configuration error repeats on every push: logged once per reason and minute.
    private let configurationErrorLog: OncePerInterval

    /// - Parameter notificationsShareEndService: whether notifications (reminders) go through the push service that
    ///   carries live-activity pushes (FCM for both; not with `PUSH_TRANSPORT=apns`), so their acceptance counts
    ///   in `acceptedByEndService`.
    /// - Parameter now: the clock of the configuration-error log's once-a-minute limit.
    public init(transport: any PushTransport, transportName: String, concurrency: Int, metrics: WorkerMetrics, logger: Logger,
                notificationsShareEndService: Bool = true, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        configurationErrorLog = OncePerInterval(.seconds(60), now: now)
        self.notificationsShareEndService = notificationsShareEndService
        self.transport = transport
        self.transportName = transportName
        permits = AsyncSemaphore(concurrency)
        self.metrics = metrics
        self.logger = logger.with(["component": "push"])
    }

    /// The retry reason of a push left unsent because its job was cancelled.
    static let cancelledReason = "cancelled"

    /// Pushes accepted so far by the push service that carries end pushes (any kind it carries): a change tells
    /// `EndRecoveryWake` that the service accepts again.
    public var acceptedByEndService: Int { endServiceAccepted.value }

    public var pushesInFlightLimit: Int? { permits.capacity }

    /// `PUSH_CONCURRENCY` permits free now.
    var permitsAvailable: Int { permits.available }

    /// Takes one permit per push, sends them through the transport as one batch and counts their results; every
    /// push of a batch is counted with the batch's latency. Once the calling task is cancelled nothing more is sent:
    /// a batch not yet handed to the transport comes back as `retry` (`cancelled`) without waiting for permits, or
    /// with its permits given back.
    public func sendBatch(_ pushes: [OutgoingPush], kind: PushKind, keepingSlots: Bool) async -> (deliveries: [Delivery], slots: PushSlots) {
        precondition(pushes.count <= permits.capacity, "a batch takes at most PUSH_CONCURRENCY (\(permits.capacity)) pushes")
        guard !pushes.isEmpty else { return ([], .none) }
        let messages = pushes.map { Self.message($0, kind: kind) }
        // The job was cancelled (the worker is stopping): what is not sent yet stays unsent, to be sent by whichever
        // worker runs the job next; it waits for no permit.
        let unsent = (Array(repeating: Delivery.retry(after: nil, reason: Self.cancelledReason), count: pushes.count), PushSlots.none)
        if Task.isCancelled { return unsent }
        let started = ContinuousClock.now
        await permits.acquire(messages.count)
        let slots = PushSlots(messages.count) { [permits] in permits.release($0) }
        if Task.isCancelled {
            slots.releaseAll()
            return unsent
        }
        // Unrecorded pushes give their permit back as their answer arrives, so a slow answer holds one permit, not
        // its batch's (never more than the batch took, should an answer be told twice).
        let giveBackOne: PushAnswerHook = { _ in slots.release(1) }
        let results = await transport.sendAll(messages, onAnswer: keepingSlots ? nil : giveBackOne)
        precondition(results.count == messages.count, "the transport answered \(results.count) of \(messages.count) pushes")
        let latency = ContinuousClock.now - started
        var deliveries: [Delivery] = []
        deliveries.reserveCapacity(messages.count)
        var configurationErrors: [String: Int] = [:]
        var acceptedByEndService = 0
        for (push, (message, result)) in zip(pushes, zip(messages, results)) {
            metrics.pushLatency.observe(latency, labels: transportName)
            let delivery = Self.delivery(result, kind: kind)
            metrics.push(kind: kind, platform: push.platform, delivery: delivery)
            if case .configurationError(let reason) = delivery { configurationErrors[reason, default: 0] += 1 }
            if case .accepted = delivery, notificationsShareEndService || Self.isLiveActivity(message) { acceptedByEndService += 1 }
            deliveries.append(delivery)
        }
        if acceptedByEndService > 0 { endServiceAccepted.withLock { $0 += acceptedByEndService } }
        for (reason, count) in configurationErrors.sorted(by: { $0.key < $1.key }) {
            guard let unlogged = configurationErrorLog.pass(reason, count: count) else { continue }
            logger.error("push service configuration error: check credentials and project",
                         ["reason": .string(reason), "pushes": .int(count), "unlogged_pushes": .int(unlogged)])
        }
        guard keepingSlots else {
            slots.releaseAll()
            return (deliveries, .none)
        }
        return (deliveries, slots)
    }

    static func isLiveActivity(_ message: PushMessage) -> Bool {
        if case .liveActivity = message.content { return true }
        return false
    }

    static func message(_ push: OutgoingPush, kind: PushKind) -> PushMessage {
        switch push {
        case .liveActivity(let payload, let fcmToken, let activityToken):
            .liveActivity(id: kind.rawValue, fcmToken: fcmToken, activityToken: activityToken,
                          apnsHeaders: payload.apnsHeaders, apsJSON: payload.apsJSON)
        case .notification(let notification, let fcmToken):
            .notification(id: kind.rawValue, fcmToken: fcmToken, title: notification.title, body: notification.body,
                          data: notification.data, options: NotificationOptions(notification.delivery))
        case .androidCountdown(let message, let fcmToken):
            .androidCountdown(id: kind.rawValue, fcmToken: fcmToken, message)
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

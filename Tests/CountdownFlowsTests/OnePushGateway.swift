import CountdownDomain
import CountdownFlows
import TestSupport

/// A test gateway that answers one push at a time: a batch is its pushes answered concurrently, with no bound on
/// pushes in flight and no slots kept.
protocol OnePushGateway: PushGateway {
    func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery
}

extension OnePushGateway {
    var pushesInFlightLimit: Int? { nil }

    func sendBatch(_ pushes: [OutgoingPush], kind: PushKind, keepingSlots: Bool) async -> (deliveries: [Delivery], slots: PushSlots) {
        (await pushes.concurrentMap { await self.send($0, kind: kind) }, .none)
    }
}

import BlockingIO
import CountdownDomain
import CountdownFlows
import PushPayloads
import Testing

/// `sendEach` and `sendAll` hand the gateway batches of at most `batchSize` pushes, concurrently, and give every
/// result back under its own index, a batch at a time.
@Suite struct PushGatewayBatchingTests {
    /// Answers each push by its FCM token and records the batches it is handed (and how many are out at once).
    final class BatchGateway: PushGateway {
        let pushesInFlightLimit: Int?
        let batches = Locked<[[String]]>([])
        let out = Locked((now: 0, peak: 0))
        init(limit: Int? = nil) { pushesInFlightLimit = limit }
        func sendBatch(_ pushes: [OutgoingPush], kind: PushKind, keepingSlots: Bool) async -> (deliveries: [Delivery], slots: PushSlots) {
            let tokens = pushes.map(Self.token)
            batches.withLock { $0.append(tokens) }
            out.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
            try? await Task.sleep(for: .milliseconds(5))
            out.withLock { $0.now -= 1 }
            let deliveries = tokens.map { $0.hasSuffix("7") ? Delivery.tokenRefused(.fcm, reason: "UNREGISTERED") : .accepted(name: $0) }
            return (deliveries, keepingSlots ? PushSlots(pushes.count) { _ in } : .none)
        }
        static func token(_ push: OutgoingPush) -> String {
            if case .notification(_, let token) = push { return token }
            return "?"
        }
    }

    static func pushes(_ count: Int) -> [OutgoingPush] {
        (0..<count).map { .notification(ReminderNotification(title: "t", body: "b", data: [:]), fcmToken: "fcm-\($0)") }
    }

    @Test func everyResultComesBackUnderItsOwnIndex() async {
        let gateway = BatchGateway()
        var seen: [Int: Delivery] = [:]
        var starts: [Int] = []
        await gateway.sendEach(Self.pushes(100), kind: .reminder) { start, deliveries, slots in
            #expect(slots.count == 0, "unrecorded pushes keep no slots")
            starts.append(start)
            for (offset, delivery) in deliveries.enumerated() {
                #expect(seen[start + offset] == nil, "index \(start + offset) twice")
                seen[start + offset] = delivery
            }
        }
        #expect(starts.sorted() == [0, 32, 64, 96])
        #expect(seen.count == 100)
        for index in 0..<100 {
            let token = "fcm-\(index)"
            #expect(seen[index] == (token.hasSuffix("7") ? .tokenRefused(.fcm, reason: "UNREGISTERED") : .accepted(name: token)))
        }
        let sizes = gateway.batches.value.map(\.count).sorted()
        #expect(sizes == [4, 32, 32, 32])
        #expect(Set(gateway.batches.value.flatMap { $0 }).count == 100)
    }

    @Test func sendAllKeepsTheOrderOfThePushes() async {
        let deliveries = await BatchGateway().sendAll(Self.pushes(40), kind: .reminder)
        #expect(deliveries.count == 40)
        #expect(deliveries[3] == .accepted(name: "fcm-3"))
        #expect(deliveries[37] == .tokenRefused(.fcm, reason: "UNREGISTERED"))
        #expect(await BatchGateway().sendAll([], kind: .reminder).isEmpty)
    }

    /// A small `PUSH_CONCURRENCY` cuts the batches to a quarter of it, and a window keeps twice its pushes out.
    @Test func batchesFollowTheGatewaysBoundOnPushesInFlight() async {
        let gateway = BatchGateway(limit: 16)
        #expect(gateway.batchSize == 4 && gateway.batchesOut == 8)
        var kept = 0
        await gateway.sendEach(Self.pushes(100), kind: .start, keepingSlots: true, window: gateway.batchesOut) { _, deliveries, slots in
            #expect(slots.count == deliveries.count, "a recorded batch's slots come with its results")
            kept += slots.count
        }
        #expect(kept == 100)
        #expect(gateway.batches.value.map(\.count) == Array(repeating: 4, count: 25))
        #expect(gateway.out.value.peak <= 8 && gateway.out.value.peak >= 2)
        #expect(BatchGateway(limit: 1).batchSize == 1 && BatchGateway().batchSize == 32)
    }
}

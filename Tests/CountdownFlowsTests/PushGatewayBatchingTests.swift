import BlockingIO
import CountdownDomain
import CountdownFlows
import PushPayloads
import Testing

/// `sendEach` and `sendAll` hand the gateway batches of at most `pushBatchSize` pushes, concurrently, and give
/// every result back under its own index, a batch at a time.
@Suite struct PushGatewayBatchingTests {
    /// Answers each push by its FCM token and records the batches it is handed.
    final class BatchGateway: PushGateway {
        let batches = Locked<[[String]]>([])
        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery { await sendBatch([push], kind: kind)[0] }
        func sendBatch(_ pushes: [OutgoingPush], kind: PushKind) async -> [Delivery] {
            let tokens = pushes.map(Self.token)
            batches.withLock { $0.append(tokens) }
            try? await Task.sleep(for: .milliseconds(5))
            return tokens.map { $0.hasSuffix("7") ? .tokenRefused(.fcm, reason: "UNREGISTERED") : .accepted(name: $0) }
        }
        static func token(_ push: OutgoingPush) -> String {
            if case .notification(_, let token) = push { return token }
            return "?"
        }
    }

    /// Only `send` is implemented: the default `sendBatch` sends each push on its own.
    final class SingleGateway: PushGateway {
        let inFlight = Locked((now: 0, peak: 0))
        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            inFlight.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
            try? await Task.sleep(for: .milliseconds(2))
            inFlight.withLock { $0.now -= 1 }
            return .accepted(name: BatchGateway.token(push))
        }
    }

    static func pushes(_ count: Int) -> [OutgoingPush] {
        (0..<count).map { .notification(ReminderNotification(title: "t", body: "b", data: [:]), fcmToken: "fcm-\($0)") }
    }

    @Test func everyResultComesBackUnderItsOwnIndex() async {
        let gateway = BatchGateway()
        var seen: [Int: Delivery] = [:]
        var starts: [Int] = []
        await gateway.sendEach(Self.pushes(100), kind: .reminder) { start, deliveries in
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

    @Test func aGatewayWithoutBatchesStillSendsConcurrently() async {
        let gateway = SingleGateway()
        let deliveries = await gateway.sendAll(Self.pushes(50), kind: .reminder)
        #expect(deliveries == (0..<50).map { .accepted(name: "fcm-\($0)") })
        #expect(gateway.inFlight.value.peak >= 2)
    }
}

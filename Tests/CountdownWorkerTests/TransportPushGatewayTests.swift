import BlockingIO
import CountdownDomain
import CountdownFlows
@testable import CountdownWorker
@testable import Lifecycle
import Push
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// The worker's gateway: batches within `PUSH_CONCURRENCY`, results in order, every push counted.
@Suite struct TransportPushGatewayTests {
    /// Answers each message by its FCM token and records the batch sizes it is handed.
    final class BatchTransport: PushTransport {
        let batches = Locked<[Int]>([])
        func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
            batches.withLock { $0.append(messages.count) }
            return messages.map { message in
                guard case .notification(_, let title, _, _, _) = message.content else { return .rejected(reason: "unexpected") }
                if title == "config" { return .configurationError(reason: "SENDER_ID_MISMATCH") }
                return .accepted(messageName: message.id + ":" + title)
            }
        }
    }

    static func pushes(_ titles: [String]) -> [OutgoingPush] {
        titles.map { .notification(ReminderNotification(title: $0, body: "b", data: [:]), fcmToken: "fcm-" + $0) }
    }

    @Test func aBatchIsSplitAtAQuarterOfTheConcurrencyAndComesBackInOrder() async {
        let transport = BatchTransport()
        let metrics = WorkerMetrics()
        let sink = CapturingLogSink()
        let gateway = TransportPushGateway(transport: transport, transportName: "fcm", concurrency: 16, metrics: metrics,
                                           logger: Logger(level: .info, sink: sink))
        let titles = (0..<10).map { $0 == 5 || $0 == 6 ? "config" : "m\($0)" }
        let deliveries = await gateway.sendAll(Self.pushes(titles), kind: .reminder)
        #expect(transport.batches.value.sorted() == [2, 4, 4])
        for (index, title) in titles.enumerated() {
            #expect(deliveries[index] == (title == "config" ? .configurationError(reason: "SENDER_ID_MISMATCH") : .accepted(name: "reminder:" + title)))
        }
        let rendered = metrics.registry.render()
        #expect(rendered.contains(#"countdown_pushes_total{kind="reminder",result="accepted",reason="",platform="any"} 8"#), "\(rendered)")
        #expect(rendered.contains(#"countdown_push_latency_seconds_count{transport="fcm"} 10"#))
        let logged = sink.lines.filter { $0.contains("push service configuration error") }
        #expect(logged.count == 1, "one log line per batch and reason")
        #expect(logged.first?.contains(#""pushes":2"#) == true)
        #expect(await gateway.sendAll(Self.pushes(["one"]), kind: .reminder) == [.accepted(name: "reminder:one")])
    }

    /// A misconfigured fleet refuses every push: one line per reason and minute, not one per batch.
    @Test func aConfigurationErrorIsLoggedOncePerReasonAndMinute() async {
        let sink = CapturingLogSink()
        let now = Locked(ContinuousClock.now)
        let gateway = TransportPushGateway(transport: BatchTransport(), transportName: "fcm", concurrency: 4, metrics: WorkerMetrics(),
                                           logger: Logger(level: .info, sink: sink), now: { now.value })
        func send(_ titles: [String]) async -> [String] {
            _ = await gateway.sendBatch(Self.pushes(titles), kind: .reminder, keepingSlots: false)
            return sink.lines.filter { $0.contains("push service configuration error") }
        }
        #expect(await send(["config", "config"]).count == 1)
        #expect(await send(["config"]).count == 1, "the same reason within the minute")
        now.withLock { $0 += .seconds(59) }
        #expect(await send(["config", "config", "config"]).count == 1)
        now.withLock { $0 += .seconds(1) }
        let logged = await send(["config"])
        #expect(logged.count == 2, "a minute after the last line")
        #expect(logged.last?.contains(#""pushes":1"#) == true)
        #expect(logged.last?.contains(#""unlogged_pushes":4"#) == true, "\(logged)")
    }

    @Test func aCancelledTaskSendsNothingMoreAndGetsItsPushesBackUnsent() async {
        let transport = BatchTransport()
        let gateway = TransportPushGateway(transport: transport, transportName: "fcm", concurrency: 16, metrics: WorkerMetrics(),
                                           logger: Logger(level: .error, sink: CapturingLogSink()))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await gateway.sendBatch(Self.pushes(["a", "b", "c", "d", "e"]), kind: .start, keepingSlots: false).deliveries
        }
        let deliveries = await task.value
        #expect(transport.batches.value.isEmpty, "nothing reached the transport")
        #expect(deliveries == Array(repeating: .retry(after: nil, reason: TransportPushGateway.cancelledReason), count: 5))
        #expect(gateway.permitsAvailable == 16, "every permit given back")
    }

    @Test func aCancelledTaskWaitsForNoPermit() async {
        let transport = BatchTransport()
        let gateway = TransportPushGateway(transport: transport, transportName: "fcm", concurrency: 4, metrics: WorkerMetrics(),
                                           logger: Logger(level: .error, sink: CapturingLogSink()))
        let (_, held) = await gateway.sendBatch(Self.pushes(["a", "b", "c", "d"]), kind: .start, keepingSlots: true)
        #expect(gateway.permitsAvailable == 0)
        // Should the cancelled batch wait for permits, they come free after 10 s and the test fails rather than hangs.
        let released = Locked(false)
        let watchdog = Task {
            guard (try? await Task.sleep(for: .seconds(10))) != nil else { return }
            released.withLock { $0 = true }
            held.releaseAll()
        }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await gateway.sendBatch(Self.pushes(["e"]), kind: .update, keepingSlots: false).deliveries
        }
        let deliveries = await task.value
        #expect(!released.value, "answered while every permit was taken")
        #expect(deliveries == [.retry(after: nil, reason: TransportPushGateway.cancelledReason)])
        #expect(transport.batches.value == [4], "nothing more reached the transport")
        watchdog.cancel()
        held.releaseAll()
        #expect(gateway.permitsAvailable == 4)
    }

    /// A batch whose outcomes are recorded keeps its slots after the answers, until the caller gives them back: the
    /// slots' next pushes wait for the record, so a crash repeats at most one push per slot (SPEC 12.1).
    @Test func aRecordedBatchKeepsItsSlotsUntilTheyAreGivenBack() async {
        let transport = BatchTransport()
        let gateway = TransportPushGateway(transport: transport, transportName: "fcm", concurrency: 16, metrics: WorkerMetrics(),
                                           logger: Logger(level: .error, sink: CapturingLogSink()))
        #expect(gateway.batchSize == 4)
        let (deliveries, slots) = await gateway.sendBatch(Self.pushes(["a", "b", "c", "d"]), kind: .start, keepingSlots: true)
        #expect(deliveries.count == 4 && transport.batches.value == [4], "all its slots taken at once")
        #expect(gateway.permitsAvailable == 12, "answered, not yet recorded: the slots stay taken")
        slots.release(3)
        #expect(gateway.permitsAvailable == 15)
        slots.releaseAll()
        slots.releaseAll()
        #expect(gateway.permitsAvailable == 16, "given back once")
        _ = await gateway.sendBatch(Self.pushes(["e", "f"]), kind: .start, keepingSlots: false)
        #expect(gateway.permitsAvailable == 16, "an unrecorded batch gives its slots back with the answers")
        do {
            let (_, dropped) = await gateway.sendBatch(Self.pushes(["g"]), kind: .reminder, keepingSlots: true)
            #expect(dropped.count == 1)
        }
        #expect(gateway.permitsAvailable == 16, "slots nobody gives back go back when dropped")
    }

    /// `sendEach(keepingSlots:)` hands each batch's slots to its caller; the gateway's next pushes wait for them.
    @Test func aRecordedFanOutWaitsForTheRecordBeforeASlotTakesItsNextPush() async {
        let transport = BatchTransport()
        let gateway = TransportPushGateway(transport: transport, transportName: "fcm", concurrency: 8, metrics: WorkerMetrics(),
                                           logger: Logger(level: .error, sink: CapturingLogSink()))
        await gateway.sendEach(Self.pushes((0..<40).map { "m\($0)" }), kind: .reminder, keepingSlots: true) { _, deliveries, slots in
            #expect(slots.count == deliveries.count && gateway.permitsAvailable <= 8 - deliveries.count, "this batch's slots are still taken")
            slots.releaseAll()
        }
        #expect(transport.batches.value.allSatisfy { $0 <= 2 } && transport.batches.value.reduce(0, +) == 40)
        #expect(gateway.permitsAvailable == 8)
    }

    @Test func aReminderKeepsItsDeliveryOptions() {
        let delivery = NotificationDelivery(expiresAt: 1_776_708_000, timeToLiveSeconds: 412, collapseID: "reminder-0123456789abcdef",
                                            androidChannelID: "stream_reminders", androidTag: "reminder-0123456789abcdef")
        let push = OutgoingPush.notification(ReminderNotification(title: "t", body: "b", data: [:], delivery: delivery), fcmToken: "f")
        guard case .notification(_, _, _, _, let options) = TransportPushGateway.message(push, kind: .reminder).content else {
            Issue.record("expected a notification")
            return
        }
        #expect(options == NotificationOptions(apnsExpiration: 1_776_708_000, collapseID: "reminder-0123456789abcdef", androidTTLSeconds: 412,
                                               androidChannelID: "stream_reminders", androidTag: "reminder-0123456789abcdef"))
    }

    /// Accepts everything.
    final class AcceptingTransport: PushTransport {
        func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
            messages.map { .accepted(messageName: $0.id) }
        }
    }

    @Test func anAndroidCountdownGoesAsADataMessageCountedUnderItsPlatform() async {
        let metrics = WorkerMetrics()
        let gateway = TransportPushGateway(transport: AcceptingTransport(), transportName: "fcm", concurrency: 16, metrics: metrics,
                                           logger: Logger(level: .error, sink: CapturingLogSink()))
        let message = AndroidCountdownMessage(event: .end, priority: .high, ttlSeconds: 900, collapseKey: nil, data: ["type": "stream_countdown"])
        let push = OutgoingPush.androidCountdown(message, fcmToken: "fcm-a")
        guard case .androidData(let token, let options, let data) = TransportPushGateway.message(push, kind: .end).content else {
            Issue.record("expected an Android data message")
            return
        }
        #expect(token == "fcm-a" && options == AndroidMessageOptions(priority: .high, ttlSeconds: 900) && data == message.data)
        _ = await gateway.sendBatch([push, Self.pushes(["r"])[0]], kind: .end, keepingSlots: false)
        let rendered = metrics.registry.render()
        #expect(rendered.contains(#"countdown_pushes_total{kind="end",result="accepted",reason="",platform="android"} 1"#), "\(rendered)")
        #expect(rendered.contains(#"countdown_pushes_total{kind="end",result="accepted",reason="",platform="any"} 1"#), "\(rendered)")
    }

    /// Answers the first push of a batch at once and the others when the gate opens.
    final class SlowTail: PushTransport {
        let gate = AsyncGate()
        let firstAnswered = Locked(false)
        func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
            onAnswer?(0)
            firstAnswered.withLock { $0 = true }
            await gate.pass()
            for index in messages.indices.dropFirst() { onAnswer?(index) }
            onAnswer?(0)  // one answer too many (a transport breaking its contract): never more permits than taken
            return messages.map { .accepted(messageName: $0.id) }
        }
    }

    @Test func eachPushGivesItsPermitBackAsItsAnswerArrives() async throws {
        let transport = SlowTail()
        let gateway = TransportPushGateway(transport: transport, transportName: "fcm", concurrency: 8, metrics: WorkerMetrics(),
                                           logger: Logger(level: .error, sink: CapturingLogSink()))
        let task = Task { await gateway.sendBatch(Self.pushes(["fast", "slow"]), kind: .reminder, keepingSlots: false).deliveries }
        try await waitUntil("the first push is answered") { transport.firstAnswered.value }
        #expect(gateway.permitsAvailable == 7, "the answered push gave its permit back; the slow one holds one")
        transport.gate.open()
        #expect(await task.value.count == 2)
        #expect(gateway.permitsAvailable == 8)
    }

    @Test func slotsNeverGiveBackMoreThanTheyTook() async {
        let semaphore = AsyncSemaphore(4)
        await semaphore.acquire(3)
        let slots = PushSlots(3) { semaphore.release($0) }
        slots.release(1)
        #expect(slots.count == 2 && semaphore.available == 2)
        slots.releaseAll()
        slots.release(1)
        slots.releaseAll()
        #expect(slots.count == 0)
        #expect(semaphore.available == 4)
    }

    @Test func theSemaphoreServesWaitersInOrderWhateverTheyAskFor() async throws {
        let semaphore = AsyncSemaphore(4)
        await semaphore.acquire(3)
        let order = Locked<[String]>([])
        let big = Task { await semaphore.acquire(4); order.withLock { $0.append("four") } }
        try await waitUntil("the four-permit caller waits") { semaphore.waiting == 1 }
        let small = Task { await semaphore.acquire(1); order.withLock { $0.append("one") } }
        try await waitUntil("both callers wait") { semaphore.waiting == 2 }
        #expect(order.value.isEmpty, "one permit is free, but the caller before asks for four")
        semaphore.release(3)
        await big.value
        #expect(order.value == ["four"])
        semaphore.release(4)
        await small.value
        #expect(order.value == ["four", "one"])
        semaphore.release(1)
    }
}

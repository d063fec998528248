import BlockingIO
import CountdownAPI
import CountdownStore
import Foundation
import Postgres
import Testing
import TestSupport

@Suite("Device registrations are group-committed")
struct DeviceUpsertBatcherTests {
    /// Holds the first batch write until opened, and records every write.
    final class Recorder: Sendable {
        let batches = Locked([[String]]())
        let singles = Locked([String]())
        private let gate = AsyncGate()

        func held() async { await gate.pass() }
        func open() { gate.open() }
    }

    static func registration(_ device: String, token: String = "fcm") -> DeviceRegistration {
        DeviceRegistration(deviceID: device, platform: "ios", fcmToken: token)
    }

    @Test func registrationsArrivingDuringAWriteShareTheNextStatement() async throws {
        let recorder = Recorder()
        let batcher = DeviceUpsertBatcher(maxWriters: 1, write: { items in
            recorder.batches.withLock { $0.append(items.map(\.registration.deviceID)) }
            await recorder.held()
            return items.map { _ in .written }
        })
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer { recorder.open() }  // a failed wait fails the test instead of leaving the held write (and the group) waiting
            group.addTask { try await batcher.submit(Self.registration("first"), userID: nil) }
            try await waitUntil(timeout: .seconds(20), "the first batch is being written") { recorder.batches.value.count == 1 }
            for index in 0..<50 { group.addTask { try await batcher.submit(Self.registration("d\(index)"), userID: "u") } }
            try await waitUntil(timeout: .seconds(20), "50 registrations wait") { batcher.waiting == 50 }
            recorder.open()
            try await group.waitForAll()
        }
        let batches = recorder.batches.value
        #expect(batches.map(\.count) == [1, 50])
        #expect(Set(batches[1]) == Set((0..<50).map { "d\($0)" }))
        #expect(batcher.waiting == 0)
    }

    @Test func oneDeviceTwiceGoesInTwoStatementsInArrivalOrder() async throws {
        let recorder = Recorder()
        let tokens = Locked([String]())
        let batcher = DeviceUpsertBatcher(maxWriters: 2, write: { items in
            recorder.batches.withLock { $0.append(items.map(\.registration.deviceID)) }
            tokens.withLock { $0 += items.filter { $0.registration.deviceID == "same" }.map { $0.registration.fcmToken ?? "" } }
            await recorder.held()
            return items.map { _ in .written }
        })
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer { recorder.open() }  // a failed wait fails the test instead of leaving the held write (and the group) waiting
            group.addTask { try await batcher.submit(Self.registration("same", token: "t1"), userID: nil) }
            try await waitUntil(timeout: .seconds(20), "t1 is being written") { recorder.batches.value.count == 1 }
            group.addTask { try await batcher.submit(Self.registration("same", token: "t2"), userID: nil) }
            try await waitUntil(timeout: .seconds(20), "t2 waits") { batcher.waiting == 1 }
            group.addTask { try await batcher.submit(Self.registration("same", token: "t3"), userID: nil) }
            group.addTask { try await batcher.submit(Self.registration("other"), userID: nil) }
            try await waitUntil(timeout: .seconds(20), "all queued") { batcher.waiting + recorder.batches.value.dropFirst().joined().count >= 3 }
            recorder.open()
            try await group.waitForAll()
        }
        // The second writer may take "other" while "same" is written, but never t2 or t3 before t1 is done.
        #expect(tokens.value == ["t1", "t2", "t3"])
        #expect(recorder.batches.value.allSatisfy { batch in batch.filter { $0 == "same" }.count <= 1 })
    }

    @Test func aFailedBatchIsWrittenOneByOneSoOnlyTheBadRegistrationFails() async throws {
        let batcher = DeviceUpsertBatcher(write: { items in
            if items.contains(where: { $0.userID == "ghost" }) {
                throw PostgresError(code: .queryFailed, what: "upsert devices", sqlState: "23503", message: "foreign key")
            }
            return items.map { _ in .written }
        })
        let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
            for user in ["u1", "ghost", "u2", "u3"] {
                group.addTask {
                    do {
                        try await batcher.submit(Self.registration("device-\(user)"), userID: user)
                        return (user, true)
                    } catch {
                        return (user, false)
                    }
                }
            }
            var outcomes: [String: Bool] = [:]
            for await (user, ok) in group { outcomes[user] = ok }
            return outcomes
        }
        #expect(outcomes == ["u1": true, "ghost": false, "u2": true, "u3": true])
    }

    @Test func aDatabaseLostDuringTheOneByOneWritesFailsTheRestAtOnce() async throws {
        let singles = Locked(0)
        let recorder = Recorder()
        let batcher = DeviceUpsertBatcher(maxWriters: 1, write: { items in
            let writes = recorder.batches.withLock { $0.append(items.map(\.registration.deviceID)); return $0.count }
            if writes == 1 { await recorder.held() }  // the first, lone registration holds the writer
            if writes > 2 {  // the single writes after the batch of ten failed
                singles.withLock { $0 += 1 }
                throw PostgresError(code: .connectionLost, what: "upsert device", message: "server closed the connection")
            }
            throw PostgresError(code: .queryFailed, what: "upsert devices", sqlState: "23503", message: "foreign key")
        })
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            defer { recorder.open() }
            group.addTask { (try? await batcher.submit(Self.registration("first"), userID: nil)) == nil }
            try await waitUntil(timeout: .seconds(20), "the first batch is being written") { recorder.batches.value.count == 1 }
            for index in 0..<10 { group.addTask { (try? await batcher.submit(Self.registration("d\(index)"), userID: nil)) == nil } }
            try await waitUntil(timeout: .seconds(20), "10 registrations wait") { batcher.waiting == 10 }
            recorder.open()
            var failed = 0
            for try await didFail in group where didFail { failed += 1 }
            return failed
        }
        #expect(failures == 11)
        // The lone first registration failed with its own batch; one single write for the batch of ten: the
        // other nine failed with it.
        #expect(singles.value == 1)
    }

    @Test func aLostDatabaseFailsTheWholeBatchWithoutRetrying() async throws {
        let writes = Locked(0)
        let batcher = DeviceUpsertBatcher(write: { _ -> [DeviceUpsertOutcome] in
            writes.withLock { $0 += 1 }
            throw PostgresError(code: .connectionLost, what: "upsert devices", message: "server closed the connection")
        })
        let error = await #expect(throws: PostgresError.self) { try await batcher.submit(Self.registration("d1"), userID: nil) }
        #expect(error?.isConnectionLoss == true)
        #expect(writes.value == 1)
    }

    @Test func eachRegistrationOfABatchGetsItsOwnOutcome() async throws {
        let batcher = DeviceUpsertBatcher(maxWriters: 1, write: { items in
            items.map { item -> DeviceUpsertOutcome in
                switch item.registration.deviceID {
                case "linked": .refused
                case "shared": .takenOver(previousUser: "u0", sessionsEnded: 2)
                default: .written
                }
            }
        })
        let outcomes = try await withThrowingTaskGroup(of: (String, DeviceUpsertOutcome).self) { group in
            for device in ["linked", "shared", "free"] {
                group.addTask { (device, try await batcher.submit(Self.registration(device), userID: device == "shared" ? "u1" : nil)) }
            }
            var outcomes: [String: DeviceUpsertOutcome] = [:]
            for try await (device, outcome) in group { outcomes[device] = outcome }
            return outcomes
        }
        #expect(outcomes == ["linked": .refused, "shared": .takenOver(previousUser: "u0", sessionsEnded: 2), "free": .written])
    }
}

extension DeviceUpsertBatcherTests {
    @Test func aWriterWhoseRequestIsCancelledLeavesTheOthersToTheNextWriter() async throws {
        let recorder = Recorder()
        let batcher = DeviceUpsertBatcher(maxWriters: 1, write: { items in
            recorder.batches.withLock { $0.append(items.map(\.registration.deviceID)) }
            if items.map(\.registration.deviceID) == ["first"] {
                await recorder.held()
                try Task.checkCancellation()  // the statement is cancelled with the writer's request
            }
            return items.map { _ in .written }
        })
        let first = Task { try await batcher.submit(Self.registration("first"), userID: nil) }
        defer { recorder.open() }
        try await waitUntil(timeout: .seconds(20), "the first batch is being written") { recorder.batches.value.count == 1 }
        let others = (0..<3).map { index in Task { try await batcher.submit(Self.registration("d\(index)"), userID: nil) } }
        try await waitUntil(timeout: .seconds(20), "three registrations wait") { batcher.waiting == 3 }
        first.cancel()
        recorder.open()
        await #expect(throws: CancellationError.self) { try await first.value }
        for other in others { #expect(try await other.value == .written) }
        #expect(Set(recorder.batches.value.dropFirst().joined()) == ["d0", "d1", "d2"])
    }
}

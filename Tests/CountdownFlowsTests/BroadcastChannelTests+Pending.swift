import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import Telemetry
import TestSupport
import Testing

/// A start while another caller (another device's start, a backfill) is creating the stream's channel: its iOS 18
/// devices wait for that channel, briefly; every other device's start goes at once.
extension BroadcastChannelTests {
    /// Seeds stream `s` with an iOS 18 device (d1) and an iOS 17 one (d2), and holds its channel intent as another caller.
    static func heldByAnotherCaller(_ client: PostgresClient) async throws -> (row: Int64, claim: String) {
        try await client.transaction { connection in
            try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1", "d2"])], on: connection)
            try BroadcastChannels.recordOSVersion(device: "d1", version: "18.1", major: 18, on: connection)
            try BroadcastChannels.recordOSVersion(device: "d2", version: "17.5.1", major: 17, on: connection)
        }
        let answer = try await StoreClient(client).claimChannel(stream: "s", claim: "other-job", maxAlive: 100, holdSeconds: 60)
        let held: (row: Int64, claim: String)? = if case .create(let row, let claim, _) = answer { (row, claim) } else { nil }
        #expect(try await StoreClient(client).claimChannel(stream: "s", claim: "next", maxAlive: 100, holdSeconds: 60) == .held)
        return try #require(held, "the other caller holds the intent: \(answer)")
    }

    @Test func aStartWhileAnotherCallerCreatesTheChannelPutsItsIOS18DeviceOnIt() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            let (row, claim) = try await Self.heldByAnotherCaller(client)
            let gateway = AcceptingGateway()
            let sentAtEachLook = Locked([Int]())
            let setup = Self.setup(client, FakeChannelService(), CountingBroadcastMetrics()) { _ in
                let looks = sentAtEachLook.withLock { $0.append(gateway.sent.value.count); return $0.count }
                // The other caller's channel is recorded while this start waits for it.
                if looks == 3 { _ = try? await StoreClient(client).recordChannelCreated(row: row, claim: claim, channelID: "ch-other") }
            }
            _ = try await JobHandler(context: try Self.context(client, gateway, setup)).handle(.start(stream: "s"))
            let starts = Dictionary(uniqueKeysWithValues: gateway.sent.value.map { ($0.token, $0.aps) })
            #expect(starts["pts-d1"]?.contains(#""input-push-channel":"ch-other""#) == true, "\(starts)")
            #expect(starts["pts-d2"]?.contains(#""input-push-token":1"#) == true)
            #expect(sentAtEachLook.value == [1, 1, 1], "the iOS 17 start went before the wait, the iOS 18 one after the channel")
            #expect(try await Self.rows(client) == ["in_use:ch-other"])
        }
    }

    /// A page's OS versions are read once: the iOS 18 device that waited for the channel goes on it, though its app
    /// reported another version meanwhile.
    @Test func aPagesOSVersionsAreReadOnce() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            let (row, claim) = try await Self.heldByAnotherCaller(client)
            let gateway = AcceptingGateway()
            let looks = Locked(0)
            let setup = Self.setup(client, FakeChannelService(), CountingBroadcastMetrics()) { _ in
                guard looks.withLock({ $0 += 1; return $0 }) == 3 else { return }
                _ = try? await StoreClient(client).recordChannelCreated(row: row, claim: claim, channelID: "ch-other")
                try? await client.transaction { try BroadcastChannels.recordOSVersion(device: "d1", version: "17.5", major: 17, on: $0) }
            }
            _ = try await JobHandler(context: try Self.context(client, gateway, setup)).handle(.start(stream: "s"))
            let starts = Dictionary(uniqueKeysWithValues: gateway.sent.value.map { ($0.token, $0.aps) })
            #expect(starts["pts-d1"]?.contains(#""input-push-channel":"ch-other""#) == true, "read before the wait, not again: \(starts)")
        }
    }

    @Test func aChannelStillBeingCreatedAfterTheWaitLeavesTheStartOnTokens() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            let (row, claim) = try await Self.heldByAnotherCaller(client)
            let gateway = AcceptingGateway()
            let metrics = CountingBroadcastMetrics()
            let looks = Locked(0)
            let setup = Self.setup(client, FakeChannelService(), metrics, startWait: .seconds(1)) { _ in looks.withLock { $0 += 1 } }
            _ = try await JobHandler(context: try Self.context(client, gateway, setup)).handle(.start(stream: "s"))
            #expect(gateway.sent.value.allSatisfy { $0.aps.contains(#""input-push-token":1"#) }, "\(gateway.sent.value)")
            #expect(gateway.sent.value.count == 2)
            #expect(looks.value == 4, "one second in steps of 250 ms, then tokens")
            #expect(metrics["fallback:channel_pending"] == 1)

            // A failed attempt waiting for its backoff is no caller at work: no wait.
            try await StoreClient(client).recordChannelFailure(row: row, claim: claim, error: "InternalServerError", retryAfterSeconds: 60, giveUp: false)
            #expect(try await StoreClient(client).claimChannel(stream: "s", claim: "next", maxAlive: 100, holdSeconds: 60) == .waiting)
        }
    }
}

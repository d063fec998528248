import Foundation
import Testing
import TestSupport

/// `CountdownSystem`'s seeding against real PostgreSQL: what `expectedStarts` reads back matches the seed's rule.
@Suite(.serialized) struct SeedingTests {
    /// The seed's rule: every user (i, k) has eligible iOS device j=1, and j=2 when i+k is odd.
    private static func eligibleDevices(streams: Int) -> Int {
        (1...streams).reduce(0) { total, i in total + (0...2).reduce(0) { $0 + 1 + ((i + $1) % 2 == 1 ? 1 : 0) } }
    }

    @Test func expectedStartsFollowTheSeedRule() async throws {
        let system = try await CountdownSystem()
        do {
            try await system.seedPeople(prefix: "h1p", streams: 3)
            let due = try await system.databaseNow() + 3600
            try await system.seedStreams(peoplePrefix: "h1p", streamPrefix: "h1.", count: 3, plannedAtEpoch: due + Double(system.startLead))
            let expected = try await system.expectedStarts(streamPrefix: "h1.")
            #expect(expected.count == Self.eligibleDevices(streams: 3))
            #expect(expected.count == 14)
            #expect(Set(expected.map(\.stream)) == ["h1.1", "h1.2", "h1.3"])
            #expect(!expected.contains { $0.isAndroid }, "push-to-start tokens are hexadecimal")
            #expect(try await system.expectedStarts(streamPrefix: "h1.1").count == 5, "stream 1's people: 3 users, i+k odd for k=0 and k=2")
            #expect(try await system.expectedStarts(streamPrefix: "h1_").isEmpty, "the prefix is matched literally")

            let devices = try await system.query("SELECT count(*) AS n FROM devices")[0].decode("n", as: Int.self)
            // j=3 when (i+k) % 3 == 0 (3 of the 9 users), j=4 when (i+k) % 5 == 0 (1 of them).
            #expect(devices == 14 + 3 + 1)
            let ledger = try await system.ledgerCounts(streamPrefix: "h1.")
            #expect(ledger.byStatus.isEmpty && ledger.extraAttempts == 0)
        } catch {
            await system.stop()
            throw error
        }
        await system.stop()
    }

    @Test func androidShareMovesStartsToAndroidWithoutChangingWhoGetsOne() async throws {
        let system = try await CountdownSystem()
        do {
            try await system.seedPeople(prefix: "h2p", streams: 3, tokenBase: 500, androidShare: 0.5)
            try await system.seedStreams(peoplePrefix: "h2p", streamPrefix: "h2.", count: 3, plannedAtEpoch: try await system.databaseNow() + 7200)
            let both = try await system.expectedStarts(streamPrefix: "h2.", android: true)
            let iosOnly = try await system.expectedStarts(streamPrefix: "h2.")
            #expect(both.count == Self.eligibleDevices(streams: 3))
            #expect(both.contains { $0.isAndroid } && both.contains { !$0.isAndroid })
            #expect(iosOnly == both.filter { !$0.isAndroid })
            let tokens = try await system.query("SELECT fcm_token FROM devices WHERE fcm_token IS NOT NULL").map { try $0.decode("fcm_token", as: String.self) }
            #expect(tokens.allSatisfy { Int($0.suffix(8)).map { $0 > 500 } == true }, "token numbers start above tokenBase")
        } catch {
            await system.stop()
            throw error
        }
        await system.stop()
    }
}

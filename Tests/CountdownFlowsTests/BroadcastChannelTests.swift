import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Telemetry
import TestSupport
import Testing

/// SPEC 12.5 in the flows, against a real PostgreSQL and Apple's channel API in memory: one channel per stream
/// whatever the callers do, orphans deleted, token pushes when there is no channel, starts on the channel for iOS 18,
/// updates and ends as one broadcast.
@Suite struct BroadcastChannelTests {
    /// Accepts every push and records its event, token and payload.
    final class AcceptingGateway: OnePushGateway {
        let sent = Locked([(event: LiveActivityEvent, token: String, aps: String)]())

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .liveActivity(let payload, _, let token) = push else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append((payload.event, token, String(decoding: payload.apsJSON, as: UTF8.self))) }
            return .accepted(name: token)
        }
    }

    static func setup(_ client: PostgresClient, _ channels: FakeChannelService, _ metrics: CountingBroadcastMetrics, maxChannels: Int = 100,
                      holdSeconds: Int = 60, startWait: Duration = .seconds(5),
                      sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }) -> BroadcastSetup {
        BroadcastSetup(channels: channels, store: StoreClient(client), metrics: metrics, maxChannels: maxChannels, holdSeconds: holdSeconds,
                       maxAttempts: 3, backoff: { _ in .seconds(30) }, startWait: startWait, pollInterval: .milliseconds(250), sleep: sleep)
    }

    static func context(_ client: PostgresClient, _ gateway: AcceptingGateway, _ broadcast: BroadcastSetup?) throws -> FlowContext {
        FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(), transport: .apns,
                    metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()), broadcast: broadcast)
    }

    static func rows(_ client: PostgresClient, _ stream: String = "s") async throws -> [String] {
        try await client.query("SELECT state || ':' || coalesce(channel_id, '-') AS r FROM countdown_broadcast_channels WHERE stream_id = $1 ORDER BY id",
                               [stream]).map { try $0.decode("r", as: String.self) }
    }

    @Test func concurrentCallersCreateOneChannelPerStream() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: $0) }
            let channels = FakeChannelService(createDelay: .milliseconds(50))
            let provisioner = ChannelProvisioner(setup: Self.setup(client, channels, CountingBroadcastMetrics()),
                                                 logger: Logger(level: .error, sink: CapturingLogSink()))
            let answers = await Array(0..<8).concurrentMap { _ in await provisioner.channel(for: "s") }
            #expect(channels.state.value.created == 1, "one channel at Apple for one stream")
            #expect(Set(answers.compactMap { $0 }) == ["ch-1"])
            #expect(await provisioner.channel(for: "s") == "ch-1", "later callers find it")
            #expect(try await Self.rows(client) == ["created:ch-1"])
        }
    }

    @Test func aCrashedCreatorsChannelIsTakenOverAndItsOrphanDeleted() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: $0) }
            let channels = FakeChannelService()
            let metrics = CountingBroadcastMetrics()
            let setup = Self.setup(client, channels, metrics)
            let store = StoreClient(client)
            // A worker recorded its intent, Apple created the channel, and the worker died before recording it.
            guard case .create = try await store.claimChannel(stream: "s", claim: "dead-worker", maxAlive: 100, holdSeconds: 60) else {
                Issue.record("the first caller holds the intent")
                return
            }
            _ = await channels.createChannel()
            #expect(await ChannelProvisioner(setup: setup, logger: Logger(level: .error, sink: CapturingLogSink())).channel(for: "s") == nil,
                    "the intent is held: tokens for now")
            try await client.execute("UPDATE countdown_broadcast_channels SET intent_at = now() - interval '2 minutes'")
            let keeper = ChannelKeeper(setup: setup, store: store, endDismissAfterSeconds: 900, logger: Logger(level: .error, sink: CapturingLogSink()))
            var report = try await keeper.run()
            #expect(report.retried == 1, "the quiet intent is taken over")
            #expect(try await Self.rows(client) == ["created:ch-2"])
            #expect(report.orphansDeleted == 0, "an unnamed channel is not deleted at once: its creator may be recording it")
            try await client.execute("UPDATE countdown_broadcast_orphans SET first_seen_at = now() - interval '10 minutes'")
            report = try await keeper.run()
            #expect(report.orphansDeleted == 1)
            #expect(channels.state.value.alive == ["ch-2"], "one channel per stream left at Apple")
            #expect(metrics["event:orphan"] == 1)
        }
    }

    /// The keeper judges a channel an orphan and deletes it at Apple after its transaction: a creator quiet past the
    /// grace period must not name that channel afterwards (its stream would use a channel Apple no longer has).
    @Test func aCreatorQuietPastTheOrphanGraceCannotRecordItsChannelOnceItIsAnOrphan() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: $0) }
            let channels = FakeChannelService()
            let store = StoreClient(client)
            guard case .create(let row, let claim, _) = try await store.claimChannel(stream: "s", claim: "slow-worker", maxAlive: 100, holdSeconds: 60),
                  case .accepted(let name) = await channels.createChannel(), let channel = name else {
                Issue.record("the first caller holds the intent and Apple creates its channel")
                return
            }
            // Apple answered long ago; the creator has not recorded it since, and nobody took its intent over.
            try await client.execute("UPDATE countdown_broadcast_channels SET intent_at = now() - interval '10 minutes'")
            #expect(try await store.orphanChannels(listed: [channel], graceSeconds: 120).isEmpty, "noted unnamed on the first listing")
            try await client.execute("UPDATE countdown_broadcast_orphans SET first_seen_at = now() - interval '10 minutes'")
            #expect(try await store.orphanChannels(listed: [channel], graceSeconds: 120) == [channel], "an orphan: deleted at Apple next")
            #expect(try await store.recordChannelCreated(row: row, claim: claim, channelID: channel) == false, "its creator can no longer name it")
            #expect(try await Self.rows(client) == ["intent:-"])
        }
    }

    @Test func failuresAndTheLimitFallBackToTokens() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { connection in
                try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: connection)
                try MigratedDatabase.seedStream("t", [("u2", "creator", ["d2"])], on: connection)
                try MigratedDatabase.seedStream("v", [("u3", "creator", ["d3"])], on: connection)
            }
            let channels = FakeChannelService()
            let metrics = CountingBroadcastMetrics()
            let provisioner = ChannelProvisioner(setup: Self.setup(client, channels, metrics, maxChannels: 2),
                                                 logger: Logger(level: .error, sink: CapturingLogSink()))
            channels.state.withLock { $0.createAnswer = .retry(after: .seconds(5), reason: "InternalServerError") }
            #expect(await provisioner.channel(for: "s") == nil)
            #expect(metrics["fallback:channel_failed"] == 1)
            let backoff = try await client.query("""
                SELECT attempts, next_attempt_at > now() + interval '20 seconds' AS later FROM countdown_broadcast_channels WHERE stream_id = 's'
                """).first
            #expect(try backoff?.decode("attempts", as: Int.self) == 1)
            #expect(try backoff?.decode("later", as: Bool.self) == true, "the next attempt waits for the backoff")
            #expect(await provisioner.channel(for: "s") == nil, "not due yet")
            channels.state.withLock { $0.createAnswer = nil }
            #expect(await provisioner.channel(for: "t") == "ch-1")
            #expect(await provisioner.channel(for: "v") == nil, "two channels alive (one intent, one created): the limit")
            #expect(metrics["fallback:channel_limit"] == 1)
        }
    }

    @Test func iOS18DevicesStartOnTheChannelOthersByToken() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { connection in
                try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1", "d2", "d3"])], on: connection)
                try BroadcastChannels.recordOSVersion(device: "d1", version: "18.1", major: 18, on: connection)
                try BroadcastChannels.recordOSVersion(device: "d2", version: "17.5.1", major: 17, on: connection)
            }
            let gateway = AcceptingGateway()
            let channels = FakeChannelService()
            let handler = JobHandler(context: try Self.context(client, gateway, Self.setup(client, channels, CountingBroadcastMetrics())))
            _ = try await handler.handle(.start(stream: "s"))
            let starts = Dictionary(uniqueKeysWithValues: gateway.sent.value.map { ($0.token, $0.aps) })
            #expect(starts["pts-d1"]?.contains(#""input-push-channel":"ch-1""#) == true)
            #expect(starts["pts-d2"]?.contains(#""input-push-token":1"#) == true)
            #expect(starts["pts-d3"]?.contains(#""input-push-token":1"#) == true, "no version reported: a token")
            #expect(try await Self.rows(client) == ["in_use:ch-1"])
        }
    }

    @Test func updatesAndEndsAreOneBroadcastEach() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: $0) }
            try await client.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'd1', 'u1', 'r-d1')")
            let gateway = AcceptingGateway()
            let channels = FakeChannelService()
            let metrics = CountingBroadcastMetrics()
            let handler = JobHandler(context: try Self.context(client, gateway, Self.setup(client, channels, metrics)))
            _ = await ChannelProvisioner(setup: Self.setup(client, channels, metrics), logger: Logger(level: .error, sink: CapturingLogSink())).channel(for: "s")
            let planned = try await client.query("SELECT planned_start_at AS p FROM streams WHERE id = 's'").first!.decode("p", as: Date.self)
            try await StoreClient(client).markChannelUsed("ch-1", shown: planned, replacing: false)

            try await client.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '1 hour' WHERE id = 's'")
            _ = try await handler.handle(.update(stream: "s"))
            _ = try await handler.handle(.update(stream: "s"))
            var sent = channels.state.value.broadcasts
            #expect(sent.count == 1, "one broadcast per update, not repeated once accepted")
            #expect(sent.first?.event == .update)
            #expect(sent.first?.headers["apns-priority"] == "5", "later and more than 15 minutes away: 5 (SPEC 12.2)")
            let moved = try await client.query("SELECT floor(extract(epoch FROM planned_start_at))::bigint AS e FROM streams WHERE id = 's'").first!.decode("e", as: Int64.self)
            #expect(sent.first?.headers["apns-expiration"] == String(moved))
            #expect(gateway.sent.value.map(\.token) == ["r-d1"], "the session's token activity gets its update too")

            try await client.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            _ = try await handler.handle(.end(stream: "s"))
            _ = try await handler.handle(.end(stream: "s"))
            sent = channels.state.value.broadcasts
            #expect(sent.map(\.event) == [.update, .end], "one end broadcast")
            #expect(metrics["end:broadcast"] == 1 && metrics["end:token"] == 1)
            #expect(try await Self.rows(client) == ["deleting:ch-1"])
            // Kept for a phone offline until the countdown it shows goes stale (planned start + EXPIRE_AFTER_SECONDS).
            let stale = moved + 3600
            #expect(sent.last?.headers["apns-expiration"] == String(stale), "the end expires when the countdown goes stale, not at its dismissal date")
            let deleteAfter = try await client.query("""
                SELECT abs(extract(epoch FROM delete_after)::float8 - $1::float8) < 5 AS ok FROM countdown_broadcast_channels
                """, [Double(stale)]).first!.decode("ok", as: Bool.self)
            #expect(deleteAfter, "deleted once its end expired")
            let keeper = ChannelKeeper(setup: Self.setup(client, channels, metrics), store: StoreClient(client), endDismissAfterSeconds: 900,
                                       logger: Logger(level: .error, sink: CapturingLogSink()))
            #expect(try await keeper.run().deleted == 0, "not before then")
            try await client.execute("UPDATE countdown_broadcast_channels SET delete_after = now() - interval '1 second'")
            let report = try await keeper.run()
            #expect(report.deleted == 1 && report.alive == 0)
            #expect(channels.state.value.alive.isEmpty && channels.state.value.deleted == ["ch-1"])
            #expect(try await Self.rows(client).isEmpty)
        }
    }

    /// An activity whose phone was away when the update moving the start earlier expired still counts down to the
    /// later start: the end is kept until that countdown goes stale, not the one the channel shows last.
    @Test func anEndIsKeptUntilTheLatestStartTheChannelsActivitiesMayShowGoesStale() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: $0) }
            let channels = FakeChannelService()
            let metrics = CountingBroadcastMetrics()
            let handler = JobHandler(context: try Self.context(client, AcceptingGateway(), Self.setup(client, channels, metrics)))
            _ = await ChannelProvisioner(setup: Self.setup(client, channels, metrics), logger: Logger(level: .error, sink: CapturingLogSink())).channel(for: "s")
            try await client.execute("UPDATE streams SET planned_start_at = date_trunc('second', now()) + interval '30 minutes' WHERE id = 's'")
            try await client.execute("DELETE FROM countdown_planned_start_history WHERE stream_id = 's'")
            let first = try await client.query("SELECT planned_start_at AS p FROM streams WHERE id = 's'").first!.decode("p", as: Date.self)
            try await StoreClient(client).markChannelUsed("ch-1", shown: first, replacing: false)

            try await client.execute("UPDATE streams SET planned_start_at = planned_start_at - interval '20 minutes' WHERE id = 's'")
            _ = try await handler.handle(.update(stream: "s"))
            #expect(try await StoreClient(client).streamAndChannel("s")?.channel?.latestStartAt == first, "the start before the move")
            try await client.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            _ = try await handler.handle(.end(stream: "s"))
            let sent = channels.state.value.broadcasts
            #expect(sent.map(\.event) == [.update, .end])
            #expect(sent.last?.headers["apns-expiration"] == String(Int(first.timeIntervalSince1970) + 3600),
                    "until the first start's countdown goes stale, not the moved one's (20 minutes earlier)")
        }
    }

    @Test func aChannelAppleForgotIsRecreatedOnceAndTheUpdateGoesByToken() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: $0) }
            let gateway = AcceptingGateway()
            let channels = FakeChannelService()
            let metrics = CountingBroadcastMetrics()
            let setup = Self.setup(client, channels, metrics)
            let handler = JobHandler(context: try Self.context(client, gateway, setup))
            _ = await ChannelProvisioner(setup: setup, logger: Logger(level: .error, sink: CapturingLogSink())).channel(for: "s")
            channels.state.withLock { _ = $0.alive.remove("ch-1") }
            try await client.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '1 hour' WHERE id = 's'")
            let outcome = try await handler.handle(.update(stream: "s"))
            #expect(!outcome.isRetry, "\(outcome)")
            #expect(metrics["fallback:channel_gone"] == 1)
            #expect(try await Self.rows(client) == ["deleting:ch-1", "created:ch-2"])
        }
    }

    @Test func broadcastOffTouchesNoChannel() async throws {
        try await MigratedDatabase.with(prefix: "bcast") { client in
            try await client.transaction { connection in
                try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1"])], on: connection)
                try BroadcastChannels.recordOSVersion(device: "d1", version: "18.1", major: 18, on: connection)
            }
            let gateway = AcceptingGateway()
            let handler = JobHandler(context: try Self.context(client, gateway, nil))
            _ = try await handler.handle(.start(stream: "s"))
            #expect(gateway.sent.value.first?.aps.contains(#""input-push-token":1"#) == true)
            #expect(try await Self.rows(client).isEmpty)
        }
    }
}

private extension HandlerOutcome {
    var isRetry: Bool { if case .retry = self { true } else { false } }
}

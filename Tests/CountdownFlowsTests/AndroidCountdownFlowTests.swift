import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// The Android countdown through the flows against real PostgreSQL (SPEC 10.4): starts at T-lead and by backfill,
/// once per device and stream; updates and ends to the devices whose start was accepted (the start ledger is the
/// Android session list); `ANDROID_COUNTDOWN=off` sends no new start but still ends what is showing.
@Suite struct AndroidCountdownFlowTests {
    /// Records every push; answers by FCM token (accepts what it has no answer for).
    final class Gateway: OnePushGateway {
        struct Sent: Equatable {
            var kind: PushKind
            var fcm: String
            var message: AndroidCountdownMessage?
            var payload: LiveActivityPayload?
        }

        let answers: Locked<[String: Delivery]>
        let sent = Locked([Sent]())
        init(_ answers: [String: Delivery]) { self.answers = Locked(answers) }

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            let fcm: String
            var message: AndroidCountdownMessage?
            var payload: LiveActivityPayload?
            switch push {
            case .liveActivity(let aps, let token, _):
                fcm = token
                payload = aps
            case .notification(_, let token): fcm = token
            case .androidCountdown(let android, let token):
                fcm = token
                message = android
            }
            sent.withLock { $0.append(Sent(kind: kind, fcm: fcm, message: message, payload: payload)) }
            return answers.value[fcm] ?? .accepted(name: "projects/p/messages/\(fcm)")
        }

        /// The Android messages sent so far as `kind fcm event seq`, and forgets them.
        func takeAndroid() -> [String] {
            sent.withLock { sent in
                defer { sent.removeAll() }
                return sent.compactMap { push in
                    push.message.map { "\(push.kind.rawValue) \(push.fcm) \($0.data["event"] ?? "") \($0.data["seq"] ?? "")" }
                }
            }
        }

        /// Every push sent so far as `kind fcm`, and forgets them.
        func takeAll() -> [String] {
            sent.withLock { sent in
                defer { sent.removeAll() }
                return sent.map { "\($0.kind.rawValue) \($0.fcm)" }
            }
        }
    }

    static func with(android: Bool = true, answers: [String: Delivery] = [:],
                     _ body: (JobHandler, PostgresClient, Gateway, CountingFlowMetrics) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "android") { client in
            let gateway = Gateway(answers)
            let metrics = CountingFlowMetrics()
            var settings = FlowSettings(startLeadSeconds: 3600)
            settings.androidCountdownEnabled = android
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: settings,
                                      transport: .fcm, metrics: metrics, logger: Logger(level: .error, sink: CapturingLogSink()))
            try await body(JobHandler(context: context), client, gateway, metrics)
        }
    }

    /// Stream `s` 30 minutes ahead: creator `c` with iOS device `c-ios` and Android device `c-and`, guest `g` with
    /// Android devices `g-and` (FCM token) and `g-none` (none).
    static func seed(_ db: PostgresClient) async throws {
        try await db.execute("INSERT INTO users (id, display_name, locale) VALUES ('c', 'Selin', 'tr'), ('g', 'Mert', 'en')")
        try await db.execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, locale) VALUES
              ('c-ios', 'c', 'ios', 'fcm-c-ios', 'pts-c-ios', NULL), ('c-and', 'c', 'android', 'fcm-c-and', NULL, NULL),
              ('g-and', 'g', 'android', 'fcm-g-and', NULL, 'en-US'), ('g-none', 'g', 'android', NULL, NULL, NULL)
            """)
        try await db.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'Launch', now() + interval '30 minutes')")
        try await db.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ('s', 'c', 'creator', 0), ('s', 'g', 'guest', 1)")
    }

    static func ledger(_ db: PostgresClient) async throws -> [String] {
        try await db.query("""
            SELECT device_id, status, coalesce(reason, '') AS reason, android_seq, coalesce(android_end_reason, '') AS ended
            FROM countdown_start_ledger ORDER BY device_id
            """).map { row in
            let reason: String = try row.decode("reason")
            let ended: String = try row.decode("ended")
            return "\(try row.decode("device_id", as: String.self))=\(try row.decode("status", as: String.self))"
                + (reason.isEmpty ? "" : ":\(reason)") + "/\(try row.decode("android_seq", as: Int.self))" + (ended.isEmpty ? "" : "/\(ended)")
        }
    }

    @Test func offSkipsAndroidAsBefore() async throws {
        try await Self.with(android: false) { handler, db, gateway, metrics in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            #expect(gateway.takeAll() == ["start fcm-c-ios"], "only the iOS device")
            #expect(try await Self.ledger(db) == ["c-and=skipped:not_ios/0", "c-ios=sent/0", "g-and=skipped:not_ios/0", "g-none=skipped:not_ios/0"])
            #expect(metrics.platformSkips.value["start/not_ios/android"] == 3, "skips carry the platform")
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            _ = try await handler.handle(.end(stream: "s"))
            #expect(gateway.takeAll().isEmpty)
        }
    }

    @Test func startGoesToEveryAndroidDeviceWithAnFCMTokenOnce() async throws {
        try await Self.with { handler, db, gateway, metrics in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            let sent = gateway.sent.value
            #expect(sent.map { "\($0.kind.rawValue) \($0.fcm)" }.sorted() == ["start fcm-c-and", "start fcm-c-ios", "start fcm-g-and"])
            let guest = try #require(sent.first { $0.fcm == "fcm-g-and" }?.message)
            #expect(guest.event == .start && guest.priority == .high && guest.collapseKey?.hasPrefix("countdown-") == true)
            #expect(guest.data["seq"] == "1" && guest.data["role"] == "guest" && guest.data["streamId"] == "s")
            #expect(guest.data["body"]?.contains("minutes") == true, "the device's locale (en-US): \(guest.data["body"] ?? "")")
            let creator = try #require(sent.first { $0.fcm == "fcm-c-and" }?.message)
            #expect(creator.data["role"] == "creator" && creator.data["body"]?.contains("dakika") == true, "the user's locale (tr)")
            #expect(try await Self.ledger(db) == ["c-and=sent/0", "c-ios=sent/0", "g-and=sent/0", "g-none=skipped:no_fcm_token/0"])
            #expect(metrics.platformSkips.value == ["start/no_fcm_token/android": 1])
            _ = gateway.takeAll()

            // Once per device and stream: the job run again, and a backfill of the guest, send nothing more.
            try await db.execute("DELETE FROM countdown_stream_progress")
            _ = try await handler.handle(.start(stream: "s"))
            _ = try await handler.handle(.backfillUser(user: "g"))
            #expect(gateway.takeAll().isEmpty)
        }
    }

    @Test func backfillNewFCMTokenLateGuestAndLogin() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()

            // A new fcm_token on the device that had none.
            try await db.execute("UPDATE devices SET fcm_token = 'fcm-g-none' WHERE device_id = 'g-none'")
            _ = try await handler.handle(.backfillDevice(device: "g-none"))
            #expect(gateway.takeAndroid() == ["start fcm-g-none start 1"])

            // A guest added inside the window.
            try await db.execute("INSERT INTO users (id, display_name) VALUES ('late', 'Late')")
            try await db.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('late-and', 'late', 'android', 'fcm-late')")
            try await db.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ('s', 'late', 'guest', 2)")
            _ = try await handler.handle(.backfillUser(user: "late"))
            #expect(gateway.takeAndroid() == ["start fcm-late start 1"])

            // A login: an anonymous Android device becomes the guest's.
            try await db.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('anon', NULL, 'android', 'fcm-anon')")
            _ = try await handler.handle(.backfillDevice(device: "anon"))
            #expect(gateway.takeAll().isEmpty, "no user yet")
            try await db.execute("UPDATE devices SET user_id = 'g' WHERE device_id = 'anon'")
            _ = try await handler.handle(.backfillDevice(device: "anon"))
            #expect(gateway.takeAndroid() == ["start fcm-anon start 1"])
        }
    }

    @Test func rescheduleUpdatesOnlyWhereTheNewStartIsNotShown() async throws {
        try await Self.with(answers: ["fcm-c-and": .retry(after: nil, reason: "UNAVAILABLE")]) { handler, db, gateway, _ in
            try await Self.seed(db)
            gateway.answers.withLock { $0 = [:] }
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '2 hours' WHERE id = 's'")
            gateway.answers.withLock { $0 = ["fcm-c-and": .retry(after: nil, reason: "UNAVAILABLE")] }
            let first = try await handler.handle(.update(stream: "s"))
            guard case .retry = first else { Issue.record("expected a retry, got \(first)"); return }
            let updates = gateway.sent.value.compactMap(\.message)
            #expect(updates.map { "\($0.data["event"] ?? "") \($0.data["seq"] ?? "")" } == ["update 2", "update 2"])
            #expect(updates.allSatisfy { $0.priority == .normal },
                    "the devices show what their starts carried, 30 minutes away; the new start is later: NORMAL (SPEC 12.2)")
            _ = gateway.takeAll()

            gateway.answers.withLock { $0 = [:] }
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid() == ["update fcm-c-and update 3"], "only the device that did not accept it, with a new seq")
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid().isEmpty)

            // Later again, more than 15 minutes ahead, after an accepted update: NORMAL.
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '1 hour' WHERE id = 's'")
            _ = try await handler.handle(.update(stream: "s"))
            let later = gateway.sent.value.compactMap(\.message)
            #expect(later.map(\.priority) == [.normal, .normal])
        }
    }

    @Test func endGoesToEveryStartedAndroidDeviceOnceEvenWhenTurnedOff() async throws {
        var startedLedger: [String] = []
        try await MigratedDatabase.with(prefix: "android_end") { client in
            let gateway = Gateway([:])
            var settings = FlowSettings(startLeadSeconds: 3600)
            settings.androidCountdownEnabled = true
            let logger = Logger(level: .error, sink: CapturingLogSink())
            let on = JobHandler(context: FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: settings,
                                                     transport: .fcm, metrics: CountingFlowMetrics(), logger: logger))
            settings.androidCountdownEnabled = false
            let off = JobHandler(context: FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: settings,
                                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: logger))
            try await Self.seed(client)
            _ = try await on.handle(.start(stream: "s"))
            startedLedger = try await Self.ledger(client)
            _ = gateway.takeAll()

            let states = try await client.withConnection { try StreamStateQueries.load(["s"], on: $0) }
            #expect(states["s"]?.hasSessions == true, "a started Android countdown counts as a session: the end job is planned")

            try await client.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            let outcome = try await off.handle(.end(stream: "s"))
            guard case .done = outcome else { Issue.record("expected done, got \(outcome)"); return }
            let ends = gateway.sent.value.compactMap(\.message)
            #expect(ends.map { "\($0.data["event"] ?? "") \($0.data["endedReason"] ?? "") \($0.data["seq"] ?? "")" } == ["end cancelled 2", "end cancelled 2"])
            #expect(ends.allSatisfy { $0.collapseKey == nil && $0.priority == .high && (5000...5400).contains($0.ttlSeconds) },
                    "an end lives until the countdown's staleAt (planned start, 30 minutes ahead, + EXPIRE_AFTER_SECONDS)")
            #expect(ends.allSatisfy { $0.data["deepLink"] == "allmine://home" })
            _ = gateway.takeAll()
            #expect(try await Self.ledger(client) == ["c-and=sent/2/cancelled", "c-ios=sent/0", "g-and=sent/2/cancelled", "g-none=skipped:no_fcm_token/0"])

            _ = try await off.handle(.end(stream: "s"))
            #expect(gateway.takeAll().isEmpty, "an end is final")
            let after = try await client.withConnection { try StreamStateQueries.load(["s"], on: $0) }
            #expect(after["s"]?.hasSessions == false)
        }
        #expect(startedLedger == ["c-and=sent/0", "c-ios=sent/0", "g-and=sent/0", "g-none=skipped:no_fcm_token/0"])
    }

    /// A device whose phone was away while the update moving the start earlier expired still counts down to the
    /// earlier-planned, later start: its end's ttl runs until that countdown goes stale, not the moved one's.
    @Test func anEndIsKeptUntilTheLatestStartTheDeviceMayShowGoesStale() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            try await db.execute("UPDATE streams SET planned_start_at = date_trunc('second', now()) + interval '30 minutes' WHERE id = 's'")
            _ = try await handler.handle(.start(stream: "s"))
            #expect(gateway.takeAndroid().sorted() == ["start fcm-c-and start 1", "start fcm-g-and start 1"])
            let first = try await db.query("SELECT planned_start_at AS p FROM streams WHERE id = 's'").first!.decode("p", as: Date.self)
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at - interval '20 minutes' WHERE id = 's'")
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid().sorted() == ["update fcm-c-and update 2", "update fcm-g-and update 2"])
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            _ = try await handler.handle(.end(stream: "s"))
            let ends = gateway.sent.value.compactMap(\.message)
            let now = try await db.query("SELECT now() AS n").first!.decode("n", as: Date.self)
            let untilStale = Int(first.timeIntervalSince1970) + 3600 - Int(now.timeIntervalSince1970)
            #expect(ends.count == 2)
            #expect(ends.allSatisfy { (untilStale - 5...untilStale + 1).contains($0.ttlSeconds) },
                    "until the first start's countdown goes stale (\(untilStale) s), not the moved one's: \(ends.map(\.ttlSeconds))")
        }
    }

    @Test func refusedTokensAreClearedReversiblyAndEndsRetriedUntilTheWindowCloses() async throws {
        try await Self.with(answers: ["fcm-g-and": .tokenRefused(.fcm, reason: "UNREGISTERED")]) { handler, db, gateway, metrics in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            #expect(try await db.query("SELECT fcm_token FROM devices WHERE device_id = 'g-and'")[0].decode("fcm_token", as: String?.self) == nil)
            let recorded = try await db.query("SELECT token_kind, old_value, reason FROM countdown_token_invalidations")
                .map { "\(try $0.decode("token_kind", as: String.self)) \(try $0.decode("old_value", as: String.self)) \(try $0.decode("reason", as: String.self))" }
            #expect(recorded == ["fcm fcm-g-and UNREGISTERED"], "recorded, so tokens restore can put it back")
            #expect(try await Self.ledger(db).contains("g-and=failed:dead_token:UNREGISTERED/0"))

            // The ended stream's end push fails for the creator's Android device: retried, then undeliverable.
            gateway.answers.withLock { $0 = ["fcm-c-and": .rejected(reason: "INVALID_ARGUMENT")] }
            _ = gateway.takeAll()
            try await db.execute("UPDATE streams SET status = 'expired' WHERE id = 's'")
            let first = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after == .seconds(5), "an end refused for a non-token reason is retried every few seconds in its first minute (SPEC 12.2)")
            #expect(gateway.takeAndroid() == ["end fcm-c-and end 2"])
            let second = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule = second else { Issue.record("expected a retry, got \(second)"); return }
            #expect(gateway.takeAndroid() == ["end fcm-c-and end 3"])
            try await db.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '5 hours'")
            let last = try await handler.handle(.end(stream: "s"))
            guard case .done = last else { Issue.record("expected done, got \(last)"); return }
            let undeliverable = try await db.query("SELECT device_id, reason, attempts FROM countdown_undeliverable_ends")
                .map { "\(try $0.decode("device_id", as: String.self))=\(try $0.decode("reason", as: String.self))/\(try $0.decode("attempts", as: Int.self))" }
            #expect(undeliverable == ["c-and=rejected/3"])
            #expect(metrics.undeliverable.value == ["rejected": 1])
            #expect(try await Self.ledger(db).contains("c-and=sent/4/undeliverable"))
            _ = gateway.takeAll()
            _ = try await handler.handle(.end(stream: "s"))
            #expect(gateway.takeAll().isEmpty)
        }
    }

    @Test func aReRegisteredDeviceGetsTheCurrentStateAndATakeoverEndsThePreviousUsersCountdownAtOnce() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '10 minutes' WHERE id = 's'")
            _ = try await handler.handle(.update(stream: "s"))
            _ = gateway.takeAll()

            // The app reinstalled: a new fcm_token. A start with the current state goes to it, once.
            try await db.execute("UPDATE devices SET fcm_token = 'fcm-g-and-2' WHERE device_id = 'g-and'")
            _ = try await handler.handle(.backfillDevice(device: "g-and"))
            let restart = gateway.sent.value.compactMap(\.message)
            #expect(gateway.takeAndroid() == ["start fcm-g-and-2 start 3"])
            let planned = try await db.query("SELECT floor(extract(epoch FROM planned_start_at))::bigint AS t FROM streams")[0].decode("t", as: Int.self)
            #expect(restart.first?.data["scheduledStartAt"] == String(planned), "the current planned start")
            _ = try await handler.handle(.backfillDevice(device: "g-and"))
            #expect(gateway.takeAll().isEmpty, "once")

            // Another user logs in on the guest's phone: the guest's countdown there ends at once.
            try await db.execute("INSERT INTO users (id, display_name) VALUES ('other', 'Other')")
            try await db.execute("UPDATE devices SET user_id = 'other' WHERE device_id = 'g-and'")
            _ = try await handler.handle(.backfillDevice(device: "g-and"))
            let ended = gateway.sent.value.compactMap(\.message)
            #expect(gateway.takeAndroid() == ["end fcm-g-and-2 end 4"])
            #expect(ended.first?.data["dismissAt"] == ended.first?.data["timestamp"], "dismissAt = now")
            #expect(ended.first?.data["endedReason"] == "cancelled")
            #expect(try await Self.ledger(db).contains("g-and=sent/4/takeover"))

            // The stream's own end later goes only to the creator's device.
            try await db.execute("UPDATE streams SET status = 'ready' WHERE id = 's'")
            _ = try await handler.handle(.end(stream: "s"))
            #expect(gateway.takeAndroid() == ["end fcm-c-and end 3"])
        }
    }

    /// The end a takeover sends is kept as long as the countdown it ends may show: until the latest planned start the
    /// device may show goes stale (the stream moved earlier after the start; the update may not have reached it).
    @Test func aTakeoverEndIsKeptUntilTheLatestStartTheDeviceMayShowGoesStale() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            try await db.execute("UPDATE streams SET planned_start_at = date_trunc('second', now()) + interval '30 minutes' WHERE id = 's'")
            _ = try await handler.handle(.start(stream: "s"))
            let first = try await db.query("SELECT planned_start_at AS p FROM streams WHERE id = 's'").first!.decode("p", as: Date.self)
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at - interval '20 minutes' WHERE id = 's'")
            _ = try await handler.handle(.update(stream: "s"))
            _ = gateway.takeAll()

            try await db.execute("INSERT INTO users (id, display_name) VALUES ('other', 'Other')")
            try await db.execute("UPDATE devices SET user_id = 'other' WHERE device_id = 'g-and'")
            _ = try await handler.handle(.backfillDevice(device: "g-and"))
            let ends = gateway.sent.value.compactMap(\.message).filter { $0.data["event"] == "end" }
            let now = try await db.query("SELECT now() AS n").first!.decode("n", as: Date.self)
            let untilStale = Int(first.timeIntervalSince1970) + 3600 - Int(now.timeIntervalSince1970)
            #expect(ends.count == 1)
            #expect(ends.allSatisfy { (untilStale - 5...untilStale + 1).contains($0.ttlSeconds) },
                    "until the first start's countdown goes stale (\(untilStale) s), not the moved one's: \(ends.map(\.ttlSeconds))")
        }
    }

    /// A takeover whose countdown another sender holds (an update or end in flight) comes back for it once the claim is
    /// released, instead of leaving the previous user's countdown on the phone; a `Retry-After` hold is waited out.
    @Test func aDeviceChangeComesBackForACountdownHeldElsewhere() async throws {
        try await Self.with { handler, db, gateway, _ in
            /// Holds the guest's Android countdown for `seconds`: by another worker, or by no worker (a `Retry-After`).
            func hold(by owner: String?, seconds: Double) async throws {
                try await db.execute("""
                    UPDATE countdown_start_ledger SET android_claimed_by = $1, android_claimed_until = now() + make_interval(secs => $2)
                    WHERE device_id = 'g-and'
                    """, [owner, seconds])
            }
            try await Self.seed(db)
            try await db.execute("INSERT INTO users (id, display_name) VALUES ('other', 'Other')")
            _ = try await handler.handle(.start(stream: "s"))
            try await hold(by: "another-worker", seconds: 60)
            try await db.execute("UPDATE devices SET user_id = 'other' WHERE device_id = 'g-and'")
            _ = gateway.takeAll()
            let claimed = try await handler.handle(.backfillDevice(device: "g-and"))
            guard case .reschedule(_, let reason) = claimed else { Issue.record("expected a reschedule, got \(claimed)"); return }
            #expect(reason == "android_countdowns_claimed_elsewhere")
            #expect(gateway.takeAll().isEmpty, "nothing sent to a countdown another sender holds")

            // The other sender let go; a Retry-After now holds the countdown for 10 s: waited out, not retried at once.
            try await hold(by: nil, seconds: 10)
            let held = try await handler.handle(.backfillDevice(device: "g-and"))
            guard case .reschedule(let after, _) = held else { Issue.record("expected a reschedule, got \(held)"); return }
            #expect(after > .seconds(8) && after <= .seconds(10), "until the hold ends, not a claim's 30 s: \(after)")
            #expect(gateway.takeAll().isEmpty)

            try await hold(by: nil, seconds: -1)
            let released = try await handler.handle(.backfillDevice(device: "g-and"))
            #expect(gateway.takeAndroid() == ["end fcm-g-and end 2"])
            #expect(try await Self.ledger(db).contains("g-and=sent/2/takeover"))
            guard case .done = released else { Issue.record("expected done, got \(released)"); return }
        }
    }

    @Test func updatesAndEndsWaitForAStartStillInFlight() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            // The guest's start is being sent (its answer not yet written) when the stream is moved.
            try await db.execute("""
                UPDATE countdown_start_ledger SET status = 'sending', claimed_until = now() + interval '30 seconds' WHERE device_id = 'g-and'
                """)
            let states = try await db.withConnection { try StreamStateQueries.load(["s"], on: $0) }
            try await db.execute("DELETE FROM countdown_start_ledger WHERE device_id = 'c-and'")
            let onlyInFlight = try await db.withConnection { try StreamStateQueries.load(["s"], on: $0) }
            #expect(states["s"]?.hasSessions == true && onlyInFlight["s"]?.hasSessions == true, "a start in flight plans the update")
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '5 minutes' WHERE id = 's'")
            let waiting = try await handler.handle(.update(stream: "s"))
            guard case .retry(_, let reason) = waiting else { Issue.record("expected a retry, got \(waiting)"); return }
            #expect(reason == "android_starts_in_flight")
            #expect(gateway.takeAndroid().isEmpty)
            try await db.execute("UPDATE countdown_start_ledger SET status = 'sent', claimed_until = NULL WHERE device_id = 'g-and'")
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid() == ["update fcm-g-and update 2"])

            // The same for an end; a claim that expired (its worker gone) is not waited for.
            try await db.execute("UPDATE countdown_start_ledger SET status = 'sending', claimed_until = now() + interval '30 seconds' WHERE device_id = 'g-and'")
            try await db.execute("UPDATE streams SET status = 'started' WHERE id = 's'")
            let ending = try await handler.handle(.end(stream: "s"))
            guard case .retry(_, let why) = ending else { Issue.record("expected a retry, got \(ending)"); return }
            #expect(why == "android_starts_in_flight")
            try await db.execute("UPDATE countdown_start_ledger SET claimed_until = now() - interval '1 second' WHERE device_id = 'g-and'")
            let gone = try await handler.handle(.end(stream: "s"))
            guard case .done = gone else { Issue.record("expected done, got \(gone)"); return }
        }
    }
}

import CountdownStore
import Foundation
import Postgres
import Testing
import TestSupport

/// A seeded, property-based table fuzzer: random writes to the contract tables as a careless backend makes them
/// (NULL where allowed, empty strings, non-finite and extreme dates, 100 KB and odd Unicode texts, users deleted
/// mid-flight, devices moving between users, statuses going backwards, bursts of reschedules), mixed with
/// well-formed streams, against two real workers and the fake FCM. Every well-formed stream gets exactly one start
/// per device on time, no worker exits, and every bad row is refused by the schema, quarantined or skipped.
///
/// `COUNTDOWN_FUZZ_SEED` repeats a run (the seed is printed); `COUNTDOWN_FUZZ_ROWS` scales it (default 12
/// well-formed streams and 4 careless writes per stream).
@Suite(.serialized) struct TableFuzzTests {
    static let lead = 5.0

    @Test func carelessWritesNeverDisturbWellFormedStreams() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["COUNTDOWN_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        let scale = environment["COUNTDOWN_FUZZ_ROWS"].flatMap { Int($0) }.map { max(1, $0) } ?? 12
        print("table fuzzer: seed \(seed), \(scale) well-formed streams (repeat with COUNTDOWN_FUZZ_SEED=\(seed))")
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": String(Int(Self.lead)), "JOB_MAX_ATTEMPTS": "3"])
        do {
            var fuzz = TableFuzz(system: system, generator: SeededGenerator(seed: seed), seed: seed)
            try await fuzz.run(wellFormed: scale)
            await system.stop()
        } catch {
            await system.stop()
            throw error
        }
    }
}

/// One fuzz run's writes and what they imply.
struct TableFuzz {
    let system: CountdownSystem
    var generator: SeededGenerator
    let seed: UInt64
    /// Well-formed streams and their devices' FCM tokens.
    var wellFormed: [String: [String]] = [:]
    var noiseUsers: [String] = []
    var noiseDevices: [String] = []
    var noiseStreams: [String] = []
    var refusedWrites = 0
    var counter = 0

    /// Old rows the schema guard (version 6) would refuse now, written as before it: those that cannot be read
    /// must reach the quarantine; those that read (an absurd but finite date) must be skipped, never started.
    static let oldBadDates = ["old-infinite": "infinity", "old-negative-infinite": "-infinity", "old-bc": "0044-03-15 00:00:00+00 BC",
                              "old-1500": "1500-01-01T00:00:00Z"]
    static let unreadable: Set<String> = ["old-infinite", "old-negative-infinite", "old-bc"]

    mutating func run(wellFormed count: Int) async throws {
        try await writeOldBadRows()
        try system.startWorker()
        try system.startWorker()
        var writes = 0
        while wellFormed.count < count || writes < count * 4 {
            if wellFormed.count < count && (writes >= count * 4 || Int.random(in: 0..<5, using: &generator) == 0) {
                try await addWellFormedStream()
            } else {
                try await carelessWrite()
                writes += 1
            }
        }
        try await checkOutcome()
    }

    private mutating func next(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)-\(counter)"
    }

    private func writeOldBadRows() async throws {
        try await system.execute("ALTER TABLE streams DROP CONSTRAINT streams_planned_start_sane")
        for (stream, date) in Self.oldBadDates.sorted(by: { $0.key < $1.key }) {
            try await system.user("u-" + stream)
            try await system.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES ($1, $2, 'ios', $3, 'pts')",
                                     ["d-" + stream, "u-" + stream, "bad-" + stream])
            try await system.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, 'Old', $2::timestamptz)", [stream, date])
            try await system.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ($1, $2, 'creator')", [stream, "u-" + stream])
        }
        try await system.execute("""
            ALTER TABLE streams ADD CONSTRAINT streams_planned_start_sane
            CHECK (planned_start_at >= '2000-01-01T00:00:00Z' AND planned_start_at < '2200-01-01T00:00:00Z') NOT VALID
            """)
    }

    private mutating func addWellFormedStream() async throws {
        let stream = next("good")
        let creator = "u-" + stream
        try await system.user(creator)
        var tokens: [String] = []
        for index in 0..<Int.random(in: 1...2, using: &generator) {
            let device = "\(stream)-phone\(index)"
            try await system.device(device, user: creator)
            tokens.append(CountdownSystem.fcmToken(device))
        }
        try await system.stream(stream, startsIn: Double.random(in: 9...16, using: &generator), creator: creator)
        wellFormed[stream] = tokens
    }

    private mutating func carelessWrite() async throws {
        switch Int.random(in: 0..<9, using: &generator) {
        case 0: try await refusedDate()
        case 1: try await noiseStream(title: String(repeating: "ş🎉", count: 34_000))
        case 2: try await noiseStream(title: "\u{202E}ters\u{0301}\u{200B}\u{FEFF}e\u{0338}𝔘𝔫𝔦 \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}")
        case 3: try await nullsAndEmptyStrings()
        case 4:
            guard let user = noiseUsers.randomElement(using: &generator) else { return try await noiseStream(title: "") }
            try await system.execute("DELETE FROM users WHERE id = $1", [user])
            noiseUsers.removeAll { $0 == user }
        case 5:
            guard let device = noiseDevices.randomElement(using: &generator), let user = noiseUsers.randomElement(using: &generator) else { return }
            try await system.execute("UPDATE devices SET user_id = $2 WHERE device_id = $1", [device, user])
        case 6:
            guard let stream = noiseStreams.randomElement(using: &generator) else { return }
            try await system.execute("UPDATE streams SET status = 'started' WHERE id = $1", [stream])
            try await system.execute("UPDATE streams SET status = 'scheduled' WHERE id = $1", [stream])
        case 7:
            // A burst of reschedules of a well-formed stream before its window opens: the last one counts.
            guard let stream = wellFormed.keys.sorted().randomElement(using: &generator) else { return }
            for _ in 0..<5 {
                try await system.execute("""
                    UPDATE streams SET planned_start_at = now() + make_interval(secs => $2)
                    WHERE id = $1 AND planned_start_at > now() + interval '8 seconds'
                    """, [stream, Double.random(in: 10...16, using: &generator)])
            }
        default:
            guard let stream = noiseStreams.randomElement(using: &generator) else { return }
            try await system.execute("UPDATE streams SET title = $2 WHERE id = $1", [stream, String(repeating: "x", count: 100_000)])
        }
    }

    /// Non-finite and absurd dates are refused by the schema (SQLSTATE 23514), on insert and on update.
    private mutating func refusedDate() async throws {
        let date = ["infinity", "-infinity", "1999-12-31T23:59:59Z", "2200-01-01T00:00:00Z", "0001-01-01 00:00:00+00 BC"]
            .randomElement(using: &generator) ?? "infinity"
        let stream = next("refused")
        let target = noiseStreams.randomElement(using: &generator)
        do {
            if let target, Bool.random(using: &generator) {
                try await system.execute("UPDATE streams SET planned_start_at = $2::timestamptz WHERE id = $1", [target, date])
            } else {
                try await system.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, 'T', $2::timestamptz)", [stream, date])
            }
            Issue.record("seed \(seed): planned_start_at \(date) was accepted")
        } catch let error as PostgresError {
            #expect(error.sqlState == "23514", "seed \(seed): \(error)")
            refusedWrites += 1
        }
    }

    /// A stream of noise users (NULL locale, empty display name) and devices (tokens NULL, empty or real).
    private mutating func noiseStream(title: String) async throws {
        let stream = next("noise")
        let user = "u-" + stream
        try await system.execute("INSERT INTO users (id, display_name, locale) VALUES ($1, $2, $3)",
                                 [user, Bool.random(using: &generator) ? "" : "Ü\u{0308}ser", Bool.random(using: &generator) ? "" : "tr"])
        noiseUsers.append(user)
        let device = "d-" + stream
        try await system.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, locale) VALUES ($1, $2, 'ios', $3, $4, $5)",
                                 [device, user, "noise-" + stream, ["", nil, "pts-" + stream].randomElement(using: &generator) ?? nil,
                                  ["", nil, "xx-YY-invalid"].randomElement(using: &generator) ?? nil])
        noiseDevices.append(device)
        try await system.stream(stream, title: title, startsIn: Double.random(in: 6...16, using: &generator), creator: user,
                                guests: noiseUsers.count > 1 ? [noiseUsers[0]].filter { $0 != user } : [])
        noiseStreams.append(stream)
    }

    /// Devices without a user, empty tokens, a session without a user.
    private mutating func nullsAndEmptyStrings() async throws {
        let device = next("orphan")
        try await system.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, timezone) VALUES ($1, NULL, 'ios', '', '', '')",
                                 [device])
        if let stream = noiseStreams.randomElement(using: &generator) {
            try await system.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ($1, $2, NULL, 'tok')",
                                     [stream, device])
        }
    }

    private func checkOutcome() async throws {
        let lead = TableFuzzTests.lead
        var due: [String: Date] = [:]
        for stream in wellFormed.keys { due[stream] = try await system.plannedStart(stream).addingTimeInterval(-lead) }
        let expected = Set(wellFormed.values.joined())
        let latest = due.values.max() ?? Date()
        let timeout = Duration.seconds(max(10, latest.timeIntervalSinceNow + 15))
        let pushes = try await system.waitForPushes(timeout: timeout, "seed \(seed): a start to every well-formed device") { pushes in
            expected.isSubset(of: Set(pushes.events("start").map(\.fcmToken)))
        }
        try await waitUntil(timeout: .seconds(20), "seed \(seed): the unreadable old streams quarantined") {
            let keys = try await system.query("SELECT key FROM countdown_quarantine").map { try $0.decode("key", as: String.self) }
            return Self.unreadable.isSubset(of: Set(keys))
        }
        let starts = try await system.pushes().events("start")
        for (stream, tokens) in wellFormed {
            for token in tokens {
                let received = starts.filter { $0.fcmToken == token }
                #expect(received.count == 1, "seed \(seed): \(token) of \(stream) got \(received.count) starts")
                guard let first = received.first, let streamDue = due[stream] else { continue }
                #expect(first.receivedAt >= streamDue.addingTimeInterval(-0.05), "seed \(seed): \(stream) started before T-lead")
                #expect(first.receivedAt < streamDue.addingTimeInterval(5), "seed \(seed): \(stream) started \(first.receivedAt.timeIntervalSince(streamDue)) s late")
            }
        }
        #expect(!pushes.contains { $0.fcmToken.hasPrefix("bad-") }, "seed \(seed): an old bad stream was started")
        let oldSent = try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id LIKE 'old-%' AND status = 'sent'")
        #expect(try oldSent[0].decode("n", as: Int.self) == 0, "seed \(seed)")
        for (index, worker) in system.workers.enumerated() {
            #expect(worker.isRunning, "seed \(seed): worker \(index) exited; log: \(worker.logPath)")
        }
    }
}

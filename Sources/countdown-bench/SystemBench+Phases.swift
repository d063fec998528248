import Foundation
import Postgres
import TestSupport

extension SystemBench {
    // MARK: Seeding

    func seedPeople() async throws {
        let started = Date()
        try await system.seedPeople(prefix: "b", streams: options.streams, androidShare: options.androidShare)
        try await analyzeTables()
        let seconds = Date().timeIntervalSince(started)
        let users = try await count("SELECT count(*) AS n FROM users")
        let devices = try await count("SELECT count(*) AS n FROM devices")
        results.seedPeople = .init(seconds: SystemBenchReport.rounded(seconds, 2), users: users, devices: devices)
        progress("seeded \(users) users and \(devices) devices in \(String(format: "%.1f", seconds))s")
    }

    func analyzeTables() async throws {
        try await system.db.withConnection { try $0.executeScript(Self.analyze) }
    }

    /// Inserts rows planned far ahead (`insert`, and ANALYZE in the same transaction), lets the relay drain, then
    /// moves them (`move(due)`, `moved` rows) so their due second is T, and lets the relay drain again. Returns T and
    /// the timings.
    ///
    /// The relay is timed from the commit: it sees no row before it. With ANALYZE after the commit, the relay
    /// drained part of the rows while ANALYZE ran, and the time left after it (the relay's time as reported) depended
    /// on how long ANALYZE took. ANALYZE in the inserting transaction counts its own rows.
    func queueWithDueSecond(
        insert: @escaping @Sendable (PostgresConnection) throws -> Void, outboxRows: Int, moved: Int, move: (_ due: Double) async throws -> Void
    ) async throws -> (due: Double, timings: SystemBenchResults.Seeding) {
        let round = SystemBenchReport.rounded
        var started = Date()
        try await system.db.transaction { connection in
            try insert(connection)
            try connection.executeScript(Self.analyze)
        }
        let inserted = Date().timeIntervalSince(started)
        started = Date()
        try await resetStatementStatistics()
        try await system.waitOutboxDrained(timeout: .seconds(900))
        let drained = Date().timeIntervalSince(started)
        let relayStatements = try await topStatements()
        let rate = Double(outboxRows) / max(drained, 0.05)
        let slowest = min(rate, relayRowsPerSecond ?? rate)
        relayRowsPerSecond = slowest
        let lead = max(6, Int((Double(moved) / slowest * 2).rounded(.up)) + 4)
        let due = (try await system.databaseNow()).rounded(.up) + Double(lead)
        started = Date()
        try await move(due)
        let updated = Date().timeIntervalSince(started)
        started = Date()
        try await system.waitOutboxDrained(timeout: .seconds(900))
        let requeued = Date().timeIntervalSince(started)
        let timings = SystemBenchResults.Seeding(
            insertSeconds: round(inserted, 2), relaySeconds: round(drained, 2), relayRowsPerSecond: Int(rate.rounded()), outboxRows: outboxRows,
            updateSeconds: round(updated, 2), requeueSeconds: round(requeued, 2), queuedBeforeDue: Date().timeIntervalSince1970 < due,
            leadSeconds: lead, relayStatements: relayStatements)
        return (due, timings)
    }

    // MARK: Phases

    func burst(workers: Int, run: Int) async throws {
        let streams = options.streams
        let prefix = "w\(workers)r\(run)."
        progress("burst \(prefix): seeding \(streams) streams")
        let planned = try await system.databaseNow() + 86_400
        let (due, timings) = try await queueWithDueSecond(
            insert: { connection in
                try CountdownSystem.seedStreams(peoplePrefix: "b", streamPrefix: prefix, count: streams, plannedAtEpoch: planned, on: connection)
            },
            outboxRows: streams * 4, moved: streams,
            move: { due in
                try await system.execute("UPDATE streams SET planned_start_at = to_timestamp($1) WHERE id LIKE $2",
                                         [due + Double(system.startLead), prefix + "%"])
            })
        let expected = try await system.expectedStarts(streamPrefix: prefix, android: android)
        progress("burst \(prefix): \(expected.count) starts due at \(Self.clock(due)) (relay \(SystemBenchReport.py(timings.relaySeconds))s for "
                 + "\(timings.outboxRows) rows)")
        try await resetStatementStatistics()
        let measured = try await measure("burst-w\(workers)r\(run)", due: due, "every start push", timeout: 600) {
            try tally.refresh().startCount(prefix: prefix) >= expected.count
        }
        let times = tally.startTimes(prefix: prefix)
        let keys = tally.startKeys(prefix: prefix)
        let counts = StartComparison.compare(expected, keys)
        try await waitUntil(timeout: .seconds(120), every: .milliseconds(500), "the start ledger to settle") {
            try await count("SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id LIKE $1 AND status IN ('pending', 'sending')",
                            [prefix + "%"]) == 0
        }
        let ledger = try await system.ledgerCounts(streamPrefix: prefix).byStatus
        let lateness = times.map { $0 - due }
        let last = lateness.max()
        let round = SystemBenchReport.rounded
        let result = SystemBenchResults.Burst(
            workers: workers, run: run, dueSecond: due, complete: measured.complete, loadAverage: measured.load, seeding: timings,
            expected: counts.expected, accepted: counts.accepted, lost: counts.lost, duplicated: counts.duplicated, unexpected: counts.unexpected,
            ledger: ledger, androidExpected: expected.filter(\.isAndroid).count, androidAccepted: keys.filter(\.isAndroid).count,
            dueToLastSeconds: last.map { round($0, 2) }, pushesPerSecond: Self.rate(times.count, over: last),
            latenessP50: lateness.isEmpty ? nil : round(percentile(lateness, 0.50), 2),
            latenessP99: lateness.isEmpty ? nil : round(percentile(lateness, 0.99), 2),
            usage: measured.usage, statements: try await topStatements(), ledgerWrites: try await ledgerWrites(), workerSamples: measured.samples)
        results.bursts.append(result)
        progress("burst \(prefix): \(counts.accepted) accepted, last \(SystemBenchReport.py(result.dueToLastSeconds))s after due, "
                 + "\(SystemBenchReport.py(result.pushesPerSecond))/s, lost \(counts.lost), duplicated \(counts.duplicated); "
                 + "worker warnings: \(SystemBenchReport.warningsLine(result.usage))")
    }

    func reminderFanout() async throws {
        let reminders = options.reminders
        let stream = "rm.popular"
        progress("reminders: seeding \(reminders) users, devices and active reminders")
        let reminderLead = Double(system.settings["REMINDER_LEAD_SECONDS"].flatMap(Double.init) ?? 600)
        let (due, timings) = try await queueWithDueSecond(
            insert: { connection in
                _ = try connection.execute("""
                    INSERT INTO users (id, display_name, locale)
                    SELECT 'rmu' || i, 'Fan ' || i, CASE WHEN i % 3 = 0 THEN 'en' ELSE 'tr' END FROM generate_series(1, $1) i
                    """, [reminders])
                _ = try connection.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token)
                    SELECT 'rmd' || i, 'rmu' || i, CASE WHEN i % 2 = 0 THEN 'ios' ELSE 'android' END,
                           'fcm-rm-' || md5('rm' || i) || lpad(i::text, 8, '0')
                    FROM generate_series(1, $1) i
                    """, [reminders])
                _ = try connection.execute("DELETE FROM countdown_outbox WHERE topic = 'device'")
                _ = try connection.execute(
                    "INSERT INTO streams (id, title, planned_start_at) VALUES ($1, 'Büyük final', now() + interval '1 day')", [stream])
                _ = try connection.execute("""
                    INSERT INTO stream_participants (stream_id, user_id, role, position)
                    VALUES ($1, 'bu1_0', 'creator', 0), ($1, 'bu1_1', 'guest', 1)
                    """, [stream])
                _ = try connection.execute(
                    "INSERT INTO stream_reminders (stream_id, user_id) SELECT $1::text, 'rmu' || i FROM generate_series(1, $2) i", [stream, reminders])
            },
            outboxRows: reminders + 3, moved: 1,
            move: { due in
                try await system.execute("UPDATE streams SET planned_start_at = to_timestamp($1) WHERE id = $2", [due + reminderLead, stream])
            })
        progress("reminders: due at \(Self.clock(due)) (relay \(SystemBenchReport.py(timings.relaySeconds))s for \(reminders + 3) rows)")
        try await resetStatementStatistics()
        let measured = try await measure("reminders", due: due, "every reminder", timeout: 900) {
            try tally.refresh().reminderCount(stream: stream) >= reminders
        }
        let times = tally.reminders.filter { $0.stream == stream }.map(\.receivedAt)
        let sent = try await count("SELECT count(*) AS n FROM stream_reminders WHERE stream_id = $1 AND status = 'sent'", [stream])
        let last = times.max().map { $0 - due }
        var result = SystemBenchResults.ReminderFanout(
            reminders: reminders, dueSecond: due, complete: measured.complete, loadAverage: measured.load, seeding: timings, accepted: times.count,
            remindersMarkedSent: sent, dueToLastSeconds: last.map { SystemBenchReport.rounded($0, 2) }, pushesPerSecond: Self.rate(times.count, over: last),
            usage: measured.usage, statements: try await topStatements(), ledgerWrites: nil, workerSamples: measured.samples)
        progress("reminders: \(times.count) accepted, last \(SystemBenchReport.py(result.dueToLastSeconds))s after due; "
                 + "worker warnings: \(SystemBenchReport.warningsLine(result.usage))")
        result.acceptedPerSecond = SystemBenchReport.perSecond(times, due: due)
        progress("reminders accepted per second after due: " + result.acceptedPerSecond.map(String.init).joined(separator: " "))
        results.reminderFanout = result
    }

    /// One stream with a creator and N guests, two eligible devices each: the start fan-out is paged
    /// (START_PAGE_SIZE) and its claims kept alive; every start within the target, none twice.
    func giantStream() async throws {
        let guests = options.giantGuests
        let stream = "gs.giant"
        // The devices that are Android: the first two bytes of the md5 of their id below the share of 65536 (none for 0).
        let threshold = Int((options.androidShare * 65_536).rounded())
        progress("giant stream: seeding a creator and \(guests) guests with two devices each")
        let (due, timings) = try await queueWithDueSecond(
            insert: { connection in
                _ = try connection.execute(
                    "INSERT INTO users (id, display_name, locale) SELECT 'gsu' || i, 'Guest ' || i, 'tr' FROM generate_series(0, $1) i", [guests])
                _ = try connection.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                    SELECT 'gsd' || i || '_' || j, 'gsu' || i, CASE WHEN a.android THEN 'android' ELSE 'ios' END,
                           'fcm-gs-' || md5('gs' || i || '_' || j) || lpad((i * 2 + j)::text, 8, '0'),
                           CASE WHEN a.android THEN NULL ELSE md5('pts-gs' || i || '_' || j) || md5('gs' || i) END
                    FROM generate_series(0, $1) i, generate_series(1, 2) j,
                         LATERAL (SELECT get_byte(decode(md5('gsd' || i || '_' || j), 'hex'), 0) * 256
                                         + get_byte(decode(md5('gsd' || i || '_' || j), 'hex'), 1) < $2 AS android) a
                    """, [guests, threshold])
                _ = try connection.execute("DELETE FROM countdown_outbox WHERE topic = 'device'")
                _ = try connection.execute(
                    "INSERT INTO streams (id, title, planned_start_at) VALUES ($1, 'Dev yayın', now() + interval '1 day')", [stream])
                _ = try connection.execute("""
                    INSERT INTO stream_participants (stream_id, user_id, role, position)
                    SELECT $1::text, 'gsu' || i, CASE WHEN i = 0 THEN 'creator' ELSE 'guest' END, i FROM generate_series(0, $2) i
                    """, [stream, guests])
            },
            outboxRows: guests + 3, moved: 1,
            move: { due in
                try await system.execute("UPDATE streams SET planned_start_at = to_timestamp($1) WHERE id = $2",
                                         [due + Double(system.startLead), stream])
            })
        let expected = try await system.expectedStarts(streamPrefix: "gs.", android: android)
        progress("giant stream: \(expected.count) starts due at \(Self.clock(due))")
        let measured = try await measure(nil, due: due, "every giant-stream start", timeout: 600) {
            try tally.refresh().startCount(prefix: "gs.") >= expected.count
        }
        let times = tally.startTimes(prefix: "gs.")
        let keys = tally.startKeys(prefix: "gs.")
        let counts = StartComparison.compare(expected, keys)
        let last = times.max().map { $0 - due }
        let result = SystemBenchResults.GiantStream(
            guests: guests, complete: measured.complete, expected: counts.expected, accepted: counts.accepted, lost: counts.lost,
            duplicated: counts.duplicated, unexpected: counts.unexpected, androidExpected: expected.filter(\.isAndroid).count,
            androidAccepted: keys.filter(\.isAndroid).count, seeding: timings, dueToLastSeconds: last.map { SystemBenchReport.rounded($0, 2) },
            usage: measured.usage)
        results.giantStream = result
        progress("giant stream: \(counts.accepted) accepted, last \(SystemBenchReport.py(result.dueToLastSeconds))s after due, "
                 + "lost \(counts.lost), duplicated \(counts.duplicated); worker warnings: \(SystemBenchReport.warningsLine(result.usage))")
    }

    /// What a phase cost from half a second before `due` until `done` held (or `timeout` seconds passed): `name`
    /// names its CPU samples (`--perf`; nil: none).
    func measure(_ name: String?, due: Double, _ what: String, timeout: Int, until done: () async throws -> Bool) async throws -> Measured {
        try await Self.sleep(until: due - 0.5)
        let load = Self.loadAverage()
        let sampler = try name.flatMap { try startSampling($0) }
        let before = try await snapshot()
        let complete = try await Self.waitCompleted(what, timeout: timeout, done)
        let after = try await snapshot()
        let samples = await sampler?.stop()
        return Measured(load: load, complete: complete, usage: after.usage(since: before, workers: fleet), samples: samples)
    }

    struct Measured {
        let load: Double
        let complete: Bool
        let usage: SystemBenchResults.Usage
        let samples: [SystemBenchResults.Sample]?
    }

    /// Pushes per second over `seconds` (nil when nothing arrived or no time passed).
    static func rate(_ pushes: Int, over seconds: Double?) -> Int? {
        guard let seconds, seconds != 0 else { return nil }
        return Int((Double(pushes) / seconds).rounded())
    }
}

import Foundation
import Postgres
import TestSupport

extension SystemBench {
    // MARK: Seeding

    func seedPeople() async throws {
        let started = Date()
        try await system.seedPeople(prefix: "b", streams: options.streams, androidShare: options.androidShare)
        try await system.db.withConnection { try $0.executeScript(Self.analyze) }
        let seconds = Date().timeIntervalSince(started)
        let users = try await count("SELECT count(*) AS n FROM users")
        let devices = try await count("SELECT count(*) AS n FROM devices")
        results.seedPeople = .init(seconds: SystemBenchReport.rounded(seconds, 2), users: users, devices: devices)
        progress("seeded \(users) users and \(devices) devices in \(String(format: "%.1f", seconds))s")
    }

    /// Inserts rows planned far ahead (`insert`, and ANALYZE in the same transaction), lets the relay drain, then
    /// moves the `moved` streams whose ids are LIKE `streams` to a planned start `plannedAfter` seconds after T, and lets the
    /// relay drain again. Returns T and the timings.
    ///
    /// The relay is timed from the commit: it sees no row before it. With ANALYZE after the commit, the relay
    /// drained part of the rows while ANALYZE ran, and the time left after it (the relay's time as reported) depended
    /// on how long ANALYZE took. ANALYZE in the inserting transaction counts its own rows.
    func queueWithDueSecond(
        insert: @escaping @Sendable (PostgresConnection) throws -> Void, outboxRows: Int, moving streams: String, moved: Int, plannedAfter: Double
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
        try await system.execute("UPDATE streams SET planned_start_at = to_timestamp($1) WHERE id LIKE $2", [due + plannedAfter, streams])
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
            outboxRows: streams * 4, moving: prefix + "%", moved: streams, plannedAfter: Double(system.startLead))
        var result = try await measureStarts(prefix, due: due, seeding: timings, samples: "burst-w\(workers)r\(run)", "every start push") { expected in
            progress("burst \(prefix): \(expected) starts due at \(Self.clock(due)) (relay \(SystemBenchReport.py(timings.relaySeconds))s for "
                     + "\(timings.outboxRows) rows)")
        }
        result.run = run
        results.bursts.append(result)
        progress("burst \(prefix): \(result.accepted) accepted, last \(SystemBenchReport.py(result.dueToLastSeconds))s after due, "
                 + "\(SystemBenchReport.py(result.pushesPerSecond))/s, lost \(result.lost), duplicated \(result.duplicated); "
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
            outboxRows: reminders + 3, moving: stream, moved: 1, plannedAfter: reminderLead)
        progress("reminders: due at \(Self.clock(due)) (relay \(SystemBenchReport.py(timings.relaySeconds))s for \(reminders + 3) rows)")
        var result = try await measure("reminders", due: due, seeding: timings, expected: reminders, "every reminder", timeout: 900) {
            try tally.refresh().reminderCount(stream: stream) >= reminders
        }
        let times = tally.reminders.filter { $0.stream == stream }.map(\.receivedAt)
        result.arrived(times, accepted: times.count)
        result.remindersMarkedSent = try await count("SELECT count(*) AS n FROM stream_reminders WHERE stream_id = $1 AND status = 'sent'", [stream])
        result.statements = try await topStatements()
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
            outboxRows: guests + 3, moving: stream, moved: 1, plannedAfter: Double(system.startLead))
        let result = try await measureStarts("gs.", due: due, seeding: timings, samples: nil, "every giant-stream start") { expected in
            progress("giant stream: \(expected) starts due at \(Self.clock(due))")
        }
        results.giantStream = result
        progress("giant stream: \(result.accepted) accepted, last \(SystemBenchReport.py(result.dueToLastSeconds))s after due, "
                 + "lost \(result.lost), duplicated \(result.duplicated); worker warnings: \(SystemBenchReport.warningsLine(result.usage))")
    }

    /// Measures the starts of the streams whose ids begin with `prefix`, due at `due`: what arrived against what the
    /// contract tables say should be sent, and the start ledger once settled. `announce` gets the number of starts
    /// due before the phase begins; `samples` names its CPU samples (`--perf`; nil: none).
    func measureStarts(
        _ prefix: String, due: Double, seeding: SystemBenchResults.Seeding, samples: String?, _ what: String, announce: (Int) -> Void
    ) async throws -> SystemBenchResults.Phase {
        let expected = try await system.expectedStarts(streamPrefix: prefix, android: android)
        announce(expected.count)
        var result = try await measure(samples, due: due, seeding: seeding, expected: expected.count, what, timeout: 600) {
            try tally.refresh().startCount(prefix: prefix) >= expected.count
        }
        let keys = tally.startKeys(prefix: prefix)
        let counts = StartComparison.compare(expected, keys)
        try await waitUntil(timeout: .seconds(120), every: .milliseconds(500), "the start ledger to settle") {
            try await count("SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id LIKE $1 AND status IN ('pending', 'sending')",
                            [prefix + "%"]) == 0
        }
        result.ledger = try await system.ledgerCounts(streamPrefix: prefix).byStatus
        result.arrived(tally.startTimes(prefix: prefix), accepted: counts.accepted)
        result.expected = counts.expected
        result.lost = counts.lost
        result.duplicated = counts.duplicated
        result.unexpected = counts.unexpected
        result.androidExpected = expected.filter(\.isAndroid).count
        result.androidAccepted = keys.filter(\.isAndroid).count
        result.statements = try await topStatements()
        result.ledgerWrites = try await ledgerWrites()
        return result
    }

    /// What a phase with `expected` pushes due cost from half a second before `due` until `done` held (or `timeout`
    /// seconds passed): `name` names its CPU samples (`--perf`; nil: none). The caller adds what arrived.
    func measure(
        _ name: String?, due: Double, seeding: SystemBenchResults.Seeding, expected: Int, _ what: String, timeout: Int,
        until done: () async throws -> Bool
    ) async throws -> SystemBenchResults.Phase {
        try await resetStatementStatistics()
        let untilStart = due - 0.5 - Date().timeIntervalSince1970
        if untilStart > 0 { try await Task.sleep(for: .milliseconds(Int(untilStart * 1000))) }
        let load = Self.loadAverage()
        let sampler = try name.flatMap { try startSampling($0) }
        let before = try await snapshot()
        let complete = try await Self.waitCompleted(what, timeout: timeout, done)
        let after = try await snapshot()
        return SystemBenchResults.Phase(
            workers: fleet.count, run: 1, dueSecond: due, complete: complete, loadAverage: load, seeding: seeding, expected: expected, accepted: 0,
            usage: after.usage(since: before, workers: fleet), workerSamples: await sampler?.stop())
    }
}

extension SystemBenchResults.Phase {
    /// Sets `accepted` and the timing of the pushes that arrived at `times` (epoch seconds).
    mutating func arrived(_ times: [Double], accepted: Int) {
        self.accepted = accepted
        let lateness = times.map { $0 - dueSecond }
        let round = SystemBenchReport.rounded
        dueToLastSeconds = lateness.max().map { round($0, 2) }
        pushesPerSecond = lateness.max().flatMap { $0 == 0 ? nil : Int((Double(times.count) / $0).rounded()) }
        latenessP50 = lateness.isEmpty ? nil : round(percentile(lateness, 0.50), 2)
        latenessP99 = lateness.isEmpty ? nil : round(percentile(lateness, 0.99), 2)
    }
}

import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// Poison jobs (unreadable, bad JSON, an unknown kind, a start for a missing stream) and poison rows (a 100 KB
    /// title, deleted users, empty tokens): dead-lettered or skipped with a reason, nothing else disturbed.
    @Test("9. poison jobs and rows")
    func scenario09Poison() async throws {
        try await ChaosScenario.run(number: 9, title: "poison jobs and rows", latencyMilliseconds: 30) { s in
            let system = s.system
            _ = try await s.startWorkers(2, ["JOB_MAX_ATTEMPTS": "3"])
            let streams = s.size(50, 200)
            try await system.seedPeople(prefix: s.people, streams: streams + 3)
            let due = (try await system.databaseNow()).rounded(.up) + 7
            let planned = due + Double(system.startLead)
            try await system.seedStreams(peoplePrefix: s.people, streamPrefix: s.prefix, count: streams, plannedAtEpoch: planned)
            let x = s.prefix + "x", p = s.people, first = s.prefix + "1"
            try await system.db.transaction { connection in
                try connection.execute("""
                    INSERT INTO streams (id, title, planned_start_at)
                    VALUES ($1::text || 'big', repeat('Çok uzun bir başlık 🎉 ', 4500), to_timestamp($2)),
                           ($1::text || 'deleted', 'Konuğu silinen yayın', to_timestamp($2)),
                           ($1::text || 'nocreator', 'Yaratıcısı silinen yayın', to_timestamp($2))
                    """, [x, planned])
                try connection.execute("""
                    INSERT INTO stream_participants (stream_id, user_id, role, position)
                    SELECT $1::text || name, $2::text || 'u' || ($3 + n) || '_' || k, CASE WHEN k = 0 THEN 'creator' ELSE 'guest' END, k
                    FROM (VALUES ('big', 1), ('deleted', 2), ('nocreator', 3)) AS t(name, n), generate_series(0, 2) k
                    """, [x, p, streams])
                try connection.execute("DELETE FROM users WHERE id IN ($1, $2)", ["\(p)u\(streams + 2)_1", "\(p)u\(streams + 3)_0"])
                try connection.execute("INSERT INTO users (id, display_name) VALUES ($1, 'Boş jeton')", [p + "empty"])
                try connection.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
                        ($1::text || 'empty-both', $1::text || 'empty', 'ios', '', ''),
                        ($1::text || 'empty-pts', $1::text || 'empty', 'ios', 'fcm-empty-pts-00000001', ''),
                        ($1::text || 'empty-fcm', $1::text || 'empty', 'ios', '', 'pts-empty-fcm')
                    """, [p])
                try connection.execute("DELETE FROM countdown_outbox WHERE topic = 'device'")
                try connection.execute(
                    "INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, 'guest', 3)", [first, p + "empty"])
            }
            s.due = due
            try await s.snapshotExpected()
            let titleBytes = try await system.query("SELECT octet_length(title) AS n FROM streams WHERE id = $1", [x + "big"])[0]
                .decode("n", as: Int.self)

            // Jobs no worker can read (and one for a stream that does not exist), written straight into the queue, due now.
            let poison: [(id: String, data: [UInt8])] = [
                ("start:c9poison-unreadable", [0xFF, 0xFE] + Array(" not a job".utf8)),
                ("start:c9poison-json", Array("start".utf8) + [0] + Array("{not json".utf8)),
                ("teleport:c9poison-kind", Array("teleport".utf8) + [0] + Array("{}".utf8)),
                ("start:c9.missing", Array("start".utf8) + [0] + Array(#"{"stream":"c9.missing"}"#.utf8)),
            ]
            for job in poison { try await system.injectRawJob(job.id, data: job.data) }
            try await s.waitUntil(due)
            _ = try await s.waitQuiet(timeout: s.size(45, 60))

            let letters = try await system.adminJSON(["dead", "list"]) as? [[String: Any]] ?? []
            let dead = Dictionary(letters.map { ($0["id"] as? String ?? "", $0) }) { first, _ in first }
            for job in ["start:c9poison-unreadable", "start:c9poison-json", "teleport:c9poison-kind"] {
                let detail = dead[job].map { " (\($0["attempts"] ?? "?") attempts: \(String(($0["lastError"] as? String ?? "").prefix(70))))" } ?? ""
                s.check(dead[job] != nil, "\(job) dead-lettered" + detail)
            }
            s.check(dead["start:c9.missing"] == nil, "a start job for a missing stream is skipped, not dead-lettered")

            var skipped: [String: String] = [:]
            for row in try await system.query("""
                SELECT device_id, status || ':' || coalesce(reason, '') AS outcome FROM countdown_start_ledger WHERE device_id LIKE $1
                """, [p + "empty%"]) {
                skipped[try row.decode("device_id")] = try row.decode("outcome", as: String.self)
            }
            s.note("empty-token devices in the ledger: "
                   + skipped.sorted { $0.key < $1.key }.map { "\($0.key.split(separator: "-", maxSplits: 1).last ?? "") \($0.value)" }
                       .joined(separator: ", "))
            s.check(skipped.count == 3 && skipped.values.allSatisfy { $0.hasPrefix("skipped:") }, "empty-token devices skipped with a reason")

            let big = try system.fakeRecords().compactMap { record -> [String: Any]? in
                guard record["event"] as? String == "start", let aps = Self.aps(of: record),
                      (aps["attributes"] as? [String: Any])?["streamId"] as? String == x + "big" else { return nil }
                return aps
            }
            let sizes = big.map { (Self.jsonBytes($0["attributes"]), Self.jsonBytes($0["content-state"])) }
            let distinct = Set(sizes.map { "(\($0.0), \($0.1))" }).sorted()
            s.note("\(titleBytes / 1024) KB title: \(big.count) starts, attributes/content-state bytes (compact JSON) \(distinct)")
            s.check(!big.isEmpty && sizes.allSatisfy { $0.0 < 4096 && $0.1 < 4096 }, "the 100 KB title was truncated under 4 KB and delivered")

            let deleted = try await system.query("""
                SELECT stream_id, count(*) AS n FROM stream_participants WHERE stream_id IN ($1, $2) GROUP BY 1 ORDER BY 1
                """, [x + "deleted", x + "nocreator"])
            let kept = try deleted.map { row in
                "\(try row.decode("stream_id", as: String.self).split(separator: ".").last ?? ""): \(try row.decode("n", as: Int.self)) participants"
            }
            s.note("streams with a deleted user keep " + kept.joined(separator: ", ") + " (the schema cascades a user's participant rows)")
            let alive = system.workers.count { $0.isRunning }
            s.check(alive == system.workers.count, "every worker kept running (\(alive)/\(system.workers.count))")
            return nil
        }
    }

    /// `message.apns.payload.aps` of an accepted message's record.
    private static func aps(of record: [String: Any]) -> [String: Any]? {
        let message = record["message"] as? [String: Any]
        let apns = message?["apns"] as? [String: Any]
        let payload = apns?["payload"] as? [String: Any]
        return payload?["aps"] as? [String: Any]
    }

    /// The size of `value` as compact UTF-8 JSON (0 when it is missing).
    private static func jsonBytes(_ value: Any?) -> Int {
        guard let value, let data = try? JSONSerialization.data(withJSONObject: value, options: [.withoutEscapingSlashes]) else { return 0 }
        return data.count
    }
}

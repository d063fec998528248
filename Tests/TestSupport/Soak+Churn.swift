import Foundation
import Postgres

extension Soak {
    /// The people seeded once (`CountdownSystem.seedPeople`, prefix `p`): user `pu<i>_<k>`, k 0-2, for i in the pool.
    struct People {
        /// Push-to-start tokens of each user's devices that get a start (iOS with both tokens).
        var startTokens: [String: [String]] = [:]
        /// Those devices' ids (one logs out and in again inside a start window).
        var startDevices: [String: [String]] = [:]
        /// Devices of each user with an FCM token (each gets a reminder).
        var reminderDevices: [String: Int] = [:]

        static func read(_ system: CountdownSystem) async throws -> People {
            var people = People()
            let rows = try await system.query("""
                SELECT user_id, device_id, platform, coalesce(fcm_token, '') AS fcm, coalesce(push_to_start_token, '') AS pts
                FROM devices WHERE starts_with(device_id, 'pd') ORDER BY device_id
                """)
            for row in rows {
                let user: String = try row.decode("user_id")
                let fcm: String = try row.decode("fcm")
                let pts: String = try row.decode("pts")
                if !fcm.isEmpty { people.reminderDevices[user, default: 0] += 1 }
                if try row.decode("platform", as: String.self) == "ios", !fcm.isEmpty, !pts.isEmpty {
                    people.startTokens[user, default: []].append(pts)
                    people.startDevices[user, default: []].append(try row.decode("device_id"))
                }
            }
            return people
        }
    }

    /// What the churn does with a stream.
    enum Fate: Equatable {
        case started, moved, cancelled, expires

        /// One in ten cancelled, one in ten left to expire, one in five moved, the rest started.
        init(_ number: Int) {
            switch number % 10 {
            case 0: self = .cancelled
            case 1: self = .expires
            case 2, 3: self = .moved
            default: self = .started
            }
        }
    }

    /// One stream of the churn: who is in it and what should reach them.
    struct StreamPlan {
        var fate: Fate
        var creator: String
        /// Planned start, epoch seconds (the database's clock; the same machine's).
        var planned: Double
        var expectedStarts: Set<String>
        var expectedReminders: Int
        var judged = false
    }

    enum Action {
        case move, cancel, relogin, sessions, end, judge
    }

    struct ScheduledAction {
        var at: Double
        var stream: String
        var action: Action
    }

    /// How long after creation the backend moves or cancels a stream (before its start window opens).
    static let changeAfter = 3.0
    /// How much later a moved stream starts.
    static let moveBy = 4.0
    /// How long after the planned start a stream is judged (its starts are due before it, its reminders too).
    static let judgeAfter = 8.0

    /// Creates stream `k<number>` with the people of `number` modulo the pool and two subscribers from the next.
    func createStream(_ number: Int) async throws {
        let id = "k\(number)"
        let index = (number - 1) % options.people + 1
        let users = (0...2).map { "pu\(index)_\($0)" }
        let subscribers = (0...1).map { "pu\(index % options.people + 1)_\($0)" }
        let plannedIn = options.plannedIn
        let planned = try await system.db.transaction { connection -> Double in
            let planned = try connection.query("""
                INSERT INTO streams (id, title, planned_start_at) VALUES ($1, $2, now() + make_interval(secs => $3::float8))
                RETURNING extract(epoch FROM planned_start_at)::float8 AS planned
                """, [id, "Soak \(number)", plannedIn]).first?.decode("planned", as: Double.self) ?? 0
            for (position, user) in users.enumerated() {
                try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, $3, $4)",
                                       [id, user, position == 0 ? "creator" : "guest", position])
            }
            for user in subscribers {
                try connection.execute("INSERT INTO stream_reminders (stream_id, user_id) VALUES ($1, $2)", [id, user])
            }
            return planned
        }
        let fate = Fate(number)
        let cancelled = fate == .cancelled
        plans[id] = StreamPlan(
            fate: fate, creator: users[0], planned: planned,
            expectedStarts: cancelled ? [] : Set(users.flatMap { people.startTokens[$0] ?? [] }),
            expectedReminders: cancelled ? 0 : subscribers.reduce(0) { $0 + (people.reminderDevices[$1] ?? 0) })
        let now = Date().timeIntervalSince1970
        switch fate {
        case .moved: schedule(now + Self.changeAfter, id, .move)
        case .cancelled:
            schedule(now + Self.changeAfter, id, .cancel)
            schedule(planned + Self.judgeAfter, id, .judge)
        case .started, .expires: scheduleAroundStart(id)
        }
    }

    /// The re-login inside the start window, the sessions just before the start, the end, the judging.
    func scheduleAroundStart(_ id: String) {
        guard let plan = plans[id] else { return }
        let lead = Double(system.startLead)
        schedule(plan.planned - min(3, lead / 2), id, .relogin)
        schedule(plan.planned - 1, id, .sessions)
        if plan.fate != .expires { schedule(plan.planned + options.endAfter, id, .end) }
        schedule(plan.planned + Self.judgeAfter, id, .judge)
    }

    func schedule(_ at: Double, _ stream: String, _ action: Action) {
        let position = actions.firstIndex { $0.at > at } ?? actions.endIndex
        actions.insert(ScheduledAction(at: at, stream: stream, action: action), at: position)
    }

    func runDueActions() async throws {
        let now = Date().timeIntervalSince1970
        while let first = actions.first, first.at <= now {
            actions.removeFirst()
            try await perform(first.action, first.stream)
        }
    }

    private func perform(_ action: Action, _ id: String) async throws {
        guard let plan = plans[id] else { return }
        switch action {
        case .move:
            let moved = try await system.query("""
                UPDATE streams SET planned_start_at = planned_start_at + make_interval(secs => $2::float8) WHERE id = $1
                RETURNING extract(epoch FROM planned_start_at)::float8 AS planned
                """, [id, Self.moveBy])
            plans[id]?.planned = try moved.first?.decode("planned", as: Double.self) ?? plan.planned
            scheduleAroundStart(id)
        case .cancel:
            try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = $1", [id])
        case .relogin:
            // Logged out and in again in one transaction: the device's user changes twice, a backfill follows.
            guard let device = people.startDevices[plan.creator]?.last else { return }
            let user = plan.creator
            try await system.db.transaction { connection in
                try connection.execute("UPDATE devices SET user_id = NULL WHERE device_id = $1", [device])
                try connection.execute("UPDATE devices SET user_id = $2 WHERE device_id = $1", [device, user])
            }
        case .sessions:
            for device in people.startDevices[plan.creator] ?? [] {
                try await system.session(stream: id, device: device, user: plan.creator)
            }
        case .end:
            try await system.execute("UPDATE streams SET status = 'started' WHERE id = $1 AND status = 'scheduled'", [id])
        case .judge:
            judge(id)
        }
    }
}

import CountdownStore
import Foundation
import TestSupport

/// Plays the app on every iOS phone of scenario 20, as docs/integration.md tells the app to: 0.2-6 s after an activity
/// starts (one in ten 8-15 s) it registers the activity's runtime token with its activity id as a session, with the
/// API's session registration (`SessionQueries.register`); at that moment it ends every other activity of the same stream
/// on the phone at once and deletes that activity's session by its id (`SessionQueries.removeOwn`, the API's `DELETE
/// …?activityId=`) — except on phones in `withoutDuplicateEnding` (an app version without it: the backend must then
/// update and end both activities). An activity on a broadcast channel (SPEC 12.5) has no runtime token: nothing is
/// registered for it, but its app ends the older activities of its stream all the same. A phone away registers and
/// deletes when it comes back.
final class PhoneApp {
    let system: CountdownSystem
    let fleet: DeviceFleet
    let model: DeviceModel
    let random: ScenarioRandom
    /// Phones whose app does not end older duplicates.
    var withoutDuplicateEnding: Set<String> = []
    /// (moment, activity, runtime token: nil on a channel) not registered yet.
    private(set) var pending: [(at: Double, activity: ModelActivity, token: String?)] = []
    private(set) var registered = 0
    /// Activities on a broadcast channel the app saw start (no session to register).
    private(set) var onChannel = 0
    private(set) var late = 0
    /// Older activities the app ended itself, and the sessions it deleted for them.
    private(set) var endedDuplicates = 0
    private(set) var deleted = 0
    /// Registrations the store refused (none expected: every device stays its user's, every stream exists).
    private(set) var refused = 0

    init(system: CountdownSystem, fleet: DeviceFleet, model: DeviceModel, random: ScenarioRandom) {
        self.system = system
        self.fleet = fleet
        self.model = model
        self.random = random
    }

    /// The activity's id as ActivityKit makes it (a UUID), the same for the same activity.
    static func activityID(_ activity: ModelActivity) -> String {
        let hex = Array(DeviceFleet.token("activity", activity.device, activity.stream, String(activity.generation), String(activity.openedAt)).uppercased())
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }

    /// The phone opened `activity`: its app registers the runtime token a little later.
    func opened(_ activity: ModelActivity) {
        let isLate = random.random() < 0.1
        let delay = isLate ? random.uniform(8, 15) : random.uniform(0.2, 6)
        late += isLate ? 1 : 0
        let token = DeviceFleet.token("runtime", activity.device, activity.stream, String(activity.generation), String(activity.openedAt))
        pending.append((ChaosScenario.now + delay, activity, activity.channel == nil ? token : nil))
    }

    /// Registers every session whose moment has come (on phones online), ending the older activities of their streams.
    func tick() async throws {
        let now = ChaosScenario.now
        // An activity the app already ended registers nothing.
        pending.removeAll { $0.activity.endedByAppAt != nil }
        let due = pending.filter { $0.at <= now && !model.phones.isAway($0.activity.device, at: now) }
        guard !due.isEmpty else { return }
        let dueIDs = Set(due.map { ObjectIdentifier($0.activity) })
        pending.removeAll { dueIDs.contains(ObjectIdentifier($0.activity)) }
        var sessions: [(stream: String, device: String, user: String, token: String, activity: String)] = []
        var deletes: [(stream: String, device: String, user: String, activity: String)] = []
        for entry in due where entry.activity.endedByAppAt == nil {
            let activity = entry.activity
            let user = fleet.devices[activity.device]?.user ?? ""
            if let token = entry.token {
                let id = Self.activityID(activity)
                model.attach(activity, token, id: id, at: now)
                sessions.append((activity.stream, activity.device, user, token, id))
                registered += 1
            } else {
                onChannel += 1
            }
            guard !withoutDuplicateEnding.contains(activity.device) else { continue }
            for other in model.activities[activity.device, default: []] where other !== activity && other.stream == activity.stream && !other.removed {
                let live = !other.ended
                model.endedByApp(other, at: now)
                endedDuplicates += live ? 1 : 0
                if let otherID = other.activityID {
                    deletes.append((other.stream, other.device, user, otherID))
                }
            }
        }
        let (registrations, removals) = (sessions, deletes)
        let outcome = try await system.db.transaction { connection in
            // As the API's session handlers write them: registrations, then the app's deletes of the activities it ended.
            var refused = 0
            for session in registrations {
                let outcome = try SessionQueries.register(stream: session.stream, device: session.device, user: session.user,
                                                        token: session.token, activity: session.activity, on: connection)
                refused += outcome == .registered ? 0 : 1
            }
            for delete in removals {
                refused += try SessionQueries.removeOwn(stream: delete.stream, device: delete.device, user: delete.user, activity: delete.activity,
                                                      on: connection) == nil ? 0 : 1
            }
            return refused
        }
        refused += outcome
        deleted += deletes.count
    }
}

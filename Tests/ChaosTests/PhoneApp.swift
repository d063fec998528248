import CountdownStore
import Foundation
import TestSupport

/// Plays the app on every iOS phone of scenario 20: registers a started activity's runtime token as a session, 0.2-6 s
/// after the start (one in ten 8-15 s), with the API's session registration (`SessionStore.register`).
final class PhoneApp {
    let system: CountdownSystem
    let fleet: DeviceFleet
    let model: DeviceModel
    let random: ScenarioRandom
    /// (moment, activity, runtime token) not registered yet.
    private(set) var pending: [(at: Double, activity: ModelActivity, token: String)] = []
    private(set) var registered = 0
    private(set) var late = 0
    /// Registrations the store refused (none expected: every device stays its user's, every stream exists).
    private(set) var refused = 0

    init(system: CountdownSystem, fleet: DeviceFleet, model: DeviceModel, random: ScenarioRandom) {
        self.system = system
        self.fleet = fleet
        self.model = model
        self.random = random
    }

    /// The phone opened `activity`: its app registers the runtime token a little later.
    func opened(_ activity: ModelActivity) {
        let isLate = random.random() < 0.1
        let delay = isLate ? random.uniform(8, 15) : random.uniform(0.2, 6)
        late += isLate ? 1 : 0
        let token = DeviceFleet.token("runtime", activity.device, activity.stream, String(activity.generation), String(activity.openedAt))
        pending.append((ChaosScenario.now + delay, activity, token))
    }

    /// Registers every session whose moment has come.
    func tick() async throws {
        let now = ChaosScenario.now
        let due = pending.filter { $0.at <= now }
        guard !due.isEmpty else { return }
        pending.removeAll { $0.at <= now }
        let sessions = due.map { (stream: $0.activity.stream, device: $0.activity.device, user: fleet.devices[$0.activity.device]?.user, token: $0.token) }
        let refused = try await system.db.transaction { connection in
            // As the API's session handler writes it.
            try sessions.reduce(0) { refused, session in
                let outcome = try SessionStore.register(stream: session.stream, device: session.device, user: session.user ?? "",
                                                        token: session.token, activity: nil, on: connection)
                return refused + (outcome == .registered ? 0 : 1)
            }
        }
        self.refused += refused
        for entry in due {
            model.attach(entry.activity, entry.token)
            registered += 1
        }
    }
}

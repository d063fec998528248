/// One operation of scenario 20 at its moment: what it is called in the notes, and the action it takes, drawn when it
/// runs (so the choices made while the run goes stay in the seeded generator's order of use).
struct DeviceOperation {
    /// What an operation writes, as the backend would.
    enum Action {
        /// The stream's planned start moved by `seconds` (later, or earlier but not into the past).
        case later(stream: String, seconds: Double)
        case earlier(stream: String, seconds: Double)
        /// The stream's planned start set to `seconds` from now.
        case set(stream: String, seconds: Double)
        case status(stream: String, status: String)
        /// `user` added as a guest of `stream`.
        case guest(stream: String, user: String)
        /// The device gets the push-to-start token (or the FCM token) it lacked.
        case pushToStartToken(device: String)
        case fcmToken(device: String)
    }

    static let nineHours = 9.0 * 3600

    /// Wall-clock epoch seconds.
    let at: Double
    let what: String
    let action: () -> Action

    /// The run's operations in time order: every stream gets one kind (every kind at least once, a roll inside its
    /// band, then at random) at a random moment of the `window` seconds after `t0`, around its T-lead (`tLead`: the
    /// wall-clock moment of each stream's T-lead); then late guests (half the bystanders) and late tokens (7 in 10 of the
    /// devices lacking one).
    static func plan(fleet: DeviceFleet, random: ScenarioRandom, t0: Double, window: Double, tLead: [String: Double]) -> [DeviceOperation] {
        var operations: [DeviceOperation] = []
        func add(_ at: Double, _ what: String, _ action: @escaping () -> Action) {
            operations.append(DeviceOperation(at: at, what: what, action: action))
        }
        let streams = fleet.streams
        var forced = [0.1, 0.2, 0.3, 0.38, 0.41, 0.5, 0.6, 0.65, 0.9]
        random.shuffle(&forced)
        for (index, stream) in streams.enumerated() {
            var at = t0 + random.uniform(1, window)
            let roll = index < forced.count ? forced[index] : random.random()
            if 0.37 <= roll && roll < 0.42 {
                // After the activities started and their sessions registered: they outlive their 8 hours and are dismissed.
                at = max(at, (tLead[stream] ?? at) + random.uniform(6, 9))
            }
            switch roll {
            case ..<0.15:
                add(at, "reschedule later") { .later(stream: stream, seconds: random.uniform(5, 30)) }
            case ..<0.27:
                add(at, "reschedule earlier") { .earlier(stream: stream, seconds: random.uniform(2, 8)) }
            case ..<0.37:
                add(at, "reschedule past 15 minutes") { .set(stream: stream, seconds: 20 * 60) }
                add(at + random.uniform(2, 5), "reschedule back inside 15 minutes") { .set(stream: stream, seconds: random.uniform(12, 25)) }
            case ..<0.40:
                add(at, "reschedule by 9 hours") { .later(stream: stream, seconds: nineHours) }
            case ..<0.42:
                add(at, "reschedule by 9 hours") { .later(stream: stream, seconds: nineHours) }
                add(at + random.uniform(3, 6), "reschedule back from 9 hours") { .set(stream: stream, seconds: random.uniform(12, 25)) }
            case ..<0.54:
                add(at, "cancel") { .status(stream: stream, status: "cancelled") }
            case ..<0.64:
                add(at, "ready") { .status(stream: stream, status: "ready") }
                add(at + random.uniform(0.5, 4), "started") { .status(stream: stream, status: "started") }
            case ..<0.70:
                add(at, "started") { .status(stream: stream, status: "started") }
            default:
                break  // left alone (expires, or stays scheduled)
            }
        }
        var spare = fleet.spare
        random.shuffle(&spare)
        for user in spare.prefix(max(2, spare.count / 2)) {
            add(t0 + random.uniform(1, window), "late guest") { .guest(stream: random.choice(streams), user: user) }
        }
        for id in fleet.deviceOrder {
            guard let device = fleet.devices[id] else { continue }
            if device.platform == "ios" && device.pushToStart == nil && random.random() < 0.7 {
                add(t0 + random.uniform(1, window), "late push-to-start token") { .pushToStartToken(device: id) }
            }
            if (device.platform == "ios" || device.platform == "android") && device.fcm == nil && random.random() < 0.7 {
                add(t0 + random.uniform(1, window), "late FCM token") { .fcmToken(device: id) }
            }
        }
        // Stable, as Python's sort was: operations at one moment keep their order.
        return operations.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }
}

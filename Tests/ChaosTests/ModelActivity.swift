import TestSupport

/// One iOS Live Activity (or one Android countdown) on one phone of the device model.
final class ModelActivity: CustomStringConvertible {
    let device: String
    let stream: String
    let generation: Int
    /// The planned start (epoch seconds) it counts down to.
    var shows: Int?
    let openedAt: Double
    /// The start that opened it: (stream, push-to-start token), or (stream, FCM token) for an Android countdown.
    let startKey: StartKey
    /// The runtime token the app registered (iOS).
    var token: String?
    var ended = false
    var endedReason: String?
    /// Ended with immediate dismissal for a stream still scheduled: a new generation may start.
    var removed = false
    /// Order of the app's session registrations (the last one of a device and stream is its session).
    var attached = 0
    /// Android: the last `seq` applied, and the end's.
    var lastSeq = 0
    var endSeq: Int?

    init(device: String, stream: String, generation: Int, shows: Int?, openedAt: Double, startKey: StartKey) {
        self.device = device
        self.stream = stream
        self.generation = generation
        self.shows = shows
        self.openedAt = openedAt
        self.startKey = startKey
    }

    var description: String {
        let state = ended ? "ended:\(endedReason ?? "None")" : "shows \(shows.map(String.init) ?? "None")"
        return "<\(device) \(stream) g\(generation) \(state)>"
    }
}

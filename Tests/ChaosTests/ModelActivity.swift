import TestSupport

/// One iOS Live Activity (or one Android countdown) on one phone of the device model.
final class ModelActivity: CustomStringConvertible {
    let device: String
    let stream: String
    let generation: Int
    /// The planned start (epoch seconds) it counts down to.
    var shows: Int?
    /// When the phone showed it (a held start: when the phone came back online).
    let openedAt: Double
    /// When the push service accepted the start that opened it.
    var startSentAt: Double = 0
    /// The start that opened it: (stream, push-to-start token), or (stream, FCM token) for an Android countdown.
    let startKey: StartKey
    /// The runtime token the app registered (iOS), with the activity's id and when.
    var token: String?
    /// The broadcast channel it is subscribed to (a push-to-start with `input-push-channel`): it has no runtime token.
    var channel: String?
    var activityID: String?
    var registeredAt: Double?
    var ended = false
    var endedReason: String?
    /// When the push service accepted the end that ended it (the backend's moment, whether or not the phone was away).
    var endSentAt: Double?
    /// Removed from the screen at once: immediate dismissal, or the app ended it.
    var removed = false
    /// When the app ended it itself (an older activity of the same stream: the app's duplicate ending).
    var endedByAppAt: Double?
    /// `stale-date` (iOS) or `staleAt` (Android) of the last content applied: when its countdown goes stale.
    var staleAt: Double?
    /// Planned starts of updates the push service dropped for their expiry while the phone was away.
    var expiredAway: Set<Int> = []
    /// When the phone came back to find the end dropped for its expiry (Android `ttl`).
    var endExpiredAt: Double?
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

    /// Ended by the backend's push (not by the app): closes the activity's generation.
    var endedByPush: Bool { ended && endedByAppAt == nil }

    var description: String {
        let state = endedByAppAt != nil ? "ended by the app" : ended ? "ended:\(endedReason ?? "None")" : "shows \(shows.map(String.init) ?? "None")"
        return "<\(device) \(stream) g\(generation) \(state)>"
    }
}

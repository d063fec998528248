import TestSupport

/// A model of each phone for chaos scenario 20: every accepted push replayed on what the phone would show (SPEC 10.1,
/// 10.4).
///
/// iOS: an accepted push-to-start opens an activity (per device, stream and generation) showing the planned start its
/// content-state carries; the app registers the activity's runtime token as a session (the harness does that, see
/// `attach`); an accepted update to that token changes what the activity shows; an accepted end ends it. An end for a
/// stream still scheduled (SPEC 12.2, the long move: it says the stream moved and stays for the dismissal window; with
/// immediate dismissal it is removed at once) closes the activity's generation: the device's next push-to-start opens
/// the next one. A push-to-start while the device still has that generation's live activity is a duplicate (the phone
/// shows two countdowns).
///
/// Android (`ANDROID_COUNTDOWN=on`, SPEC 10.4): data messages start/update/end with `seq`; the app applies a message
/// only when its seq is above the last it applied, and an end is final.
///
/// `check` judges the invariants once the run has settled. Pure: no I/O (unit-tested by `DeviceModelTests`).
final class DeviceModel {
    /// The invariants `check` judges, by number.
    static let invariants: [(number: Int, text: String)] = [
        (1, "a live activity or countdown of a stream not ended shows its current planned start"),
        (2, "every activity or countdown of an ended stream is ended"),
        (3, "no device shows two activities of one stream and generation (duplicates, bounded by the starts in flight at kills)"),
        (4, "nothing is started for an ineligible device, or before T-lead"),
        (5, "nothing is sent to change an activity or countdown after its end"),
    ]

    /// One accepted start as the model replayed it.
    struct Start {
        let device: String
        let stream: String
        let receivedAt: Double
        let planned: Int?
        let key: StartKey
    }

    /// `START_LEAD_SECONDS` of the run.
    let lead: Double
    var deviceByPushToStart: [String: String] = [:]
    var deviceByFCM: [String: String] = [:]
    var platform: [String: String] = [:]
    /// device → its activities, oldest first.
    var activities: [String: [ModelActivity]] = [:]
    var byToken: [String: ModelActivity] = [:]
    var starts: [Start] = []
    /// Start keys of duplicate activities.
    var duplicates: [StartKey] = []
    var afterEnd: [(device: String, stream: String, event: String)] = []
    var counts: [String: Int] = [:]
    var attachedCount = 0
    /// Set by `check`: the other activity of a duplicate pair, still counting down.
    var duplicatesLeftShowing: [ModelActivity] = []
    /// Broadcast channels and their subscribed activities (`DeviceModel+Channels`).
    var channels = ModelChannels()

    init(leadSeconds: Double) {
        lead = leadSeconds
    }

    // Tokens

    func device(_ deviceID: String, platform: String) {
        self.platform[deviceID] = platform
    }

    func pushToStartToken(_ deviceID: String, _ token: String) {
        deviceByPushToStart[token] = deviceID
    }

    func fcmToken(_ deviceID: String, _ token: String) {
        deviceByFCM[token] = deviceID
    }

    /// The app registered `token` as the runtime token of `activity`.
    func attach(_ activity: ModelActivity, _ token: String) {
        activity.token = token
        byToken[token] = activity
        attachedCount += 1
        activity.attached = attachedCount
    }

    func count(_ name: String) {
        counts[name, default: 0] += 1
    }

    /// Activities and countdowns not ended.
    var liveCount: Int { activities.values.reduce(0) { $0 + $1.filter { !$0.ended }.count } }
}

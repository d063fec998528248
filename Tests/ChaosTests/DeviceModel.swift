import TestSupport

/// A model of each phone for chaos scenario 20: every accepted push replayed on what the phone would show (SPEC 10.1,
/// 10.4, 12.1, 12.2).
///
/// iOS: an accepted push-to-start opens an activity (per device, stream and generation) showing the planned start its
/// content-state carries; the app registers the activity's runtime token with its activity id as a session (the
/// harness does that, see `attach`); an accepted update to that token changes what the activity shows; an accepted end
/// ends it. An end for a stream still scheduled (SPEC 12.2, the long move: it says the stream moved and stays for the
/// dismissal window; with immediate dismissal it is removed at once) closes the activity's generation: the device's
/// next push-to-start opens the next one. A push-to-start while the device still has an activity of that generation
/// the backend has not ended is a duplicate (iOS shows a second activity); the app may end the older one itself
/// (`endedByApp`, docs/integration.md's duplicate ending), else the backend must update and end both (SPEC 12.1).
///
/// Android (`ANDROID_COUNTDOWN=on`, SPEC 10.4): data messages start/update/end with `seq`; the app applies a message
/// only when its seq is above the last it applied, and an end is final.
///
/// Offline phones (`phones`): a message for a phone away is held and delivered when it comes back, as the push services
/// do (`OfflinePhones`: expiry, newest kept); `receive` replays a record line that way, `apply` on a phone online.
///
/// Broadcast channels (SPEC 12.5, `DeviceModel+Channels`; `receiveAny` replays the fake APNs' lines too): a push-to-start
/// with `input-push-channel` opens an activity subscribed to the channel, and a broadcast reaches every subscribed
/// activity under the same offline rules; the channel's stored message reaches an activity that subscribes later.
///
/// `check` judges the invariants once the run has settled. Pure: no I/O (unit-tested by `DeviceModelTests`).
final class DeviceModel {
    /// The invariants `check` judges, by number.
    static let invariants: [(number: Int, text: String)] = [
        (1, "a live activity or countdown of a stream not ended shows its current planned start"),
        (2, "every activity or countdown of an ended stream is ended, within \(Int(endWithin)) s of when it could have been"),
        (3, "no device shows two activities of one stream and generation (duplicates, bounded by the starts in flight at kills)"),
        (4, "nothing is started for an ineligible device, or before T-lead"),
        (5, "nothing is sent to change an activity or countdown after its end"),
        (6, "an ended activity or countdown says what happened (its endedReason is its stream's final status)"),
    ]
    /// The longest an end may take from the moment it could first go out (SPEC 12.2: accepted within 30 s of the
    /// cancel).
    static let endWithin = 30.0
    /// How long after the app deleted an activity's session an update for it may still come (read before the delete).
    static let appEndGrace = 10.0
    /// How long before the backend's push a session registration may have come and still not been read by it.
    static let sessionRace = 2.0

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
    /// Start keys of a stream's next generation (after a long move) to a device still showing an activity whose
    /// session the backend did not have at the long move's end: the phone shows two (the app or the backend ends the
    /// older one), but no crash repeated anything.
    var lateSessionDuplicates: [StartKey] = []
    /// Moments the fake accepted an end without `endedReason` (the long move's), per stream.
    var movedEnds: [String: [Double]] = [:]
    var afterEnd: [(device: String, stream: String, event: String)] = []
    /// Updates accepted for an activity the app had ended, and how long after the app's end (its session's delete).
    var updatesAfterAppEnd: [(activity: ModelActivity, after: Double)] = []
    /// Phones away for a window, and the messages the push services hold for them.
    var phones = OfflinePhones()
    /// Phones that came back to find a held message expired or replaced (what they show may rightly lack a start).
    var droppedAway: Set<String> = []
    var counts: [String: Int] = [:]
    var attachedCount = 0
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

    /// The app registered `token` as the runtime token of `activity` (with its activity id, at `at`).
    func attach(_ activity: ModelActivity, _ token: String, id: String? = nil, at: Double? = nil) {
        activity.token = token
        activity.activityID = id ?? activity.activityID
        activity.registeredAt = at ?? activity.registeredAt
        byToken[token] = activity
        attachedCount += 1
        activity.attached = attachedCount
    }

    /// The app ended `activity` itself at `at` (an older activity of a stream that started again: the app's duplicate
    /// ending); iOS removes it at once.
    func endedByApp(_ activity: ModelActivity, at: Double) {
        guard activity.endedByAppAt == nil, !activity.removed else { return }
        activity.removed = true
        if !activity.ended {
            activity.ended = true
            activity.endedByAppAt = at
        }
        count("ios_ended_by_app")
    }

    func count(_ name: String) {
        counts[name, default: 0] += 1
    }

    /// Activities and countdowns not ended.
    var liveCount: Int { activities.values.reduce(0) { $0 + $1.filter { !$0.ended }.count } }
}

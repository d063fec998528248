import JSON
import TestSupport

extension DeviceModel {
    /// Replays one accepted message (a line of the fake FCM's record file) on a phone online: returns the iOS activity
    /// it opened, if any (the app then registers its runtime token).
    @discardableResult
    func apply(_ record: JSONValue) -> ModelActivity? {
        deliver(record, at: record["receivedAt"]?.seconds ?? 0)
    }

    /// Replays one accepted message as the phone gets it: at once, or held while the phone is away (`phones`) and
    /// delivered when it comes back (phones whose window ended by the message's moment come back first). Returns the
    /// iOS activities opened.
    func receive(_ record: JSONValue) -> [ModelActivity] {
        let at = record["receivedAt"]?.seconds ?? 0
        var opened = returns(by: at)
        guard let device = destination(record) else {
            return opened + [apply(record)].compactMap { $0 }
        }
        let ios = platform[device] == "ios"
        if phones.hold(record, for: device, ios: ios, acceptedAt: at) {
            count("held")
            return opened
        }
        if let late = phones.late(record, for: device, ios: ios, acceptedAt: at) {
            return opened + deliver(late, to: device)
        }
        opened += [apply(record)].compactMap { $0 }
        return opened
    }

    /// The phones whose time away ended by `moment` come back: their held messages are delivered (or found
    /// expired); returns the iOS activities opened.
    func returns(by moment: Double) -> [ModelActivity] {
        phones.returns(by: moment).flatMap { deliver($0.delivery, to: $0.device) }
    }

    func deliver(_ delivery: OfflinePhones.Return, to device: String) -> [ModelActivity] {
        counts["replaced_away", default: 0] += delivery.replaced
        if delivery.replaced > 0 || !delivery.expired.isEmpty {
            droppedAway.insert(device)
        }
        for record in delivery.expired {
            expired(record, at: delivery.at)
        }
        return delivery.delivered.compactMap { deliver($0, at: delivery.at) }
    }

    /// The phone a message is for: by push-to-start token (an iOS start), by activity token (an iOS update or end),
    /// by FCM token (Android); nil when unknown.
    func destination(_ record: JSONValue) -> String? {
        let event = record["event"]?.string ?? ""
        if let activityToken = record["liveActivityToken"]?.string {
            return event == "start" ? deviceByPushToStart[activityToken] : byToken[activityToken]?.device
        }
        return record["token"]?.string.flatMap { deviceByFCM[$0] }
    }

    /// A held message the push service dropped for its expiry before the phone came back at `at`: what it would have
    /// shown is noted on its activity (an update's planned start; an Android end's moment).
    private func expired(_ record: JSONValue, at: Double) {
        let event = record["event"]?.string ?? ""
        count("expired_away_" + event)
        let message = record["message"] ?? .null
        switch event {
        case "update":
            let planned = message["apns"]?["payload"]?["aps"]?["content-state"]?["scheduledStartAt"]?.seconds.map { Int($0) }
            if let activity = record["liveActivityToken"]?.string.flatMap({ byToken[$0] }), let planned {
                activity.expiredAway.insert(planned)
            }
        case "broadcast":
            expiredOnChannel(record, at: at)
        case "android_update", "android_end":
            let data = message["data"] ?? .null
            guard let device = record["token"]?.string.flatMap({ deviceByFCM[$0] }),
                  let countdown = activities[device]?.first(where: { $0.stream == data["streamId"]?.string }) else { return }
            if event == "android_end" {
                countdown.endExpiredAt = countdown.endExpiredAt ?? at
            } else if let planned = data["scheduledStartAt"]?.string.flatMap({ Int($0) }) {
                countdown.expiredAway.insert(planned)
            }
        default:
            break
        }
    }

    /// Applies one message on its phone at `shownAt` (its acceptance, or the phone's return): the one place each kind
    /// of record line is dispatched (a new kind of push gets its case here).
    @discardableResult
    func deliver(_ record: JSONValue, at shownAt: Double) -> ModelActivity? {
        let event = record["event"]?.string ?? ""
        let message = record["message"] ?? .null
        let at = record["receivedAt"]?.seconds ?? 0
        switch event {
        case "start", "update", "end":
            return ios(event, record, message["apns"]?["payload"]?["aps"] ?? .null, at, shownAt)
        case "android_start", "android_update", "android_end":
            android(String(event.dropFirst("android_".count)), record, message["data"] ?? .null, at, shownAt)
            return nil
        case "broadcast":
            onChannel(record, at: shownAt)
            return nil
        default:
            count("other")
            return nil
        }
    }

    private func ios(_ event: String, _ record: JSONValue, _ aps: JSONValue, _ at: Double, _ shownAt: Double) -> ModelActivity? {
        let state = aps["content-state"] ?? .null
        let stream = state["streamId"]?.string ?? aps["attributes"]?["streamId"]?.string ?? ""
        let planned = state["scheduledStartAt"]?.seconds.map { Int($0) }
        count("ios_" + event)
        let token = record["liveActivityToken"]?.string ?? ""
        if event == "start" {
            guard let device = deviceByPushToStart[token] else {
                count("start_unknown_token")
                return nil
            }
            let activity = open(device, stream, planned, at, shownAt, StartKey(stream: stream, token: token))
            activity.staleAt = aps["stale-date"]?.seconds
            if let channel = aps["input-push-channel"]?.string {
                subscribe(activity, channel: channel, since: aps["timestamp"]?.seconds ?? at, at: shownAt)
            }
            return activity
        }
        guard let activity = byToken[token] else {
            count(event + "_unknown_token")
            return nil
        }
        show(event, aps, sentAt: at, on: activity, byChannel: false)
        return nil
    }

    /// Applies an update or end (`aps`, accepted at `at`) to one activity, by its token or on its channel. What
    /// reaches an ended activity is judged: an update after the backend's end violates 5; an update by token after
    /// the app ended the activity and deleted its session may still come within `appEndGrace`; a channel keeps
    /// carrying the stream's updates to an activity the app ended (its newer duplicate is on the channel too).
    func show(_ event: String, _ aps: JSONValue, sentAt at: Double, on activity: ModelActivity, byChannel: Bool) {
        let state = aps["content-state"] ?? .null
        let planned = state["scheduledStartAt"]?.seconds.map { Int($0) }
        if activity.ended {
            if event == "update", let appEnded = activity.endedByAppAt {
                if byChannel {
                    count("channel_update_after_app_end")
                } else {
                    // The app ended it and deleted its session: an update that read the session before the delete may still come.
                    count("update_after_app_end")
                    updatesAfterAppEnd.append((activity, at - appEnded))
                }
            } else if event == "update" {
                afterEnd.append((activity.device, activity.stream, byChannel ? "channel update" : event))
            } else {
                count(byChannel ? "channel_end_repeated" : "end_repeated")
            }
            return
        }
        switch event {
        case "update":
            activity.shows = planned
            activity.staleAt = aps["stale-date"]?.seconds ?? activity.staleAt
        case "end":
            activity.ended = true
            activity.endSentAt = at
            if state["endedReason"] == nil {
                movedEnds[activity.stream, default: []].append(at)
            }
            activity.endedReason = state["endedReason"]?.string
            if let dismissal = aps["dismissal-date"]?.seconds {
                activity.removed = dismissal <= (aps["timestamp"]?.seconds ?? 0) + 1
            }
            if activity.removed {
                count("ios_dismissed_at_once")
            }
        default:
            count(byChannel ? "channel_other" : "other")
        }
    }

    /// Opens the activity a push-to-start accepted at `at` starts on the phone at `shownAt`. A generation ends only by
    /// the backend's end (the long move, or an end for a stream that went on): while any activity of the device's
    /// current generation of the stream has not had one, the start is a duplicate. An older activity of a pair the app
    /// ended itself does not count (the pair was counted when its second start came): once the newer one has had the
    /// backend's end, the generation is over.
    private func open(_ device: String, _ stream: String, _ planned: Int?, _ at: Double, _ shownAt: Double, _ key: StartKey) -> ModelActivity {
        let mine = activities[device, default: []].filter { $0.stream == stream }
        starts.append(Start(device: device, stream: stream, receivedAt: at, planned: planned, key: key))
        var generation = mine.map(\.generation).max() ?? 0
        let showing = mine.filter { $0.generation == generation && !$0.endedByPush && $0.endedByAppAt == nil }
        if generation > 0, !showing.isEmpty {
            // After a long move's end to the stream (the backend's next generation), an activity whose session came
            // later than that end (or not yet) is one the backend could not end: not a crash's duplicate.
            let moved = movedEnds[stream, default: []].filter { $0 < at }.min()
            if let moved, showing.allSatisfy({ ($0.registeredAt ?? .infinity) > moved - Self.sessionRace }) {
                lateSessionDuplicates.append(key)
            } else {
                duplicates.append(key)
            }
        } else {
            generation += 1
            if generation > 1 {
                count("ios_new_generation")
            }
        }
        let activity = ModelActivity(device: device, stream: stream, generation: generation, shows: planned, openedAt: shownAt, startKey: key)
        activity.startSentAt = at
        activities[device, default: []].append(activity)
        return activity
    }

    private func android(_ event: String, _ record: JSONValue, _ data: JSONValue, _ at: Double, _ shownAt: Double) {
        count("android_" + event)
        let token = record["token"]?.string ?? ""
        let stream = data["streamId"]?.string ?? ""
        guard let device = deviceByFCM[token] else {
            count("android_unknown_token")
            return
        }
        let seq = Int(data["seq"]?.string ?? "0") ?? 0
        let planned = data["scheduledStartAt"]?.string.flatMap { Int($0) }
        let key = StartKey(stream: stream, token: token)
        if event == "start" {
            if starts.contains(where: { $0.key == key }) {
                duplicates.append(key)
            }
            starts.append(Start(device: device, stream: stream, receivedAt: at, planned: planned, key: key))
        }
        let countdown: ModelActivity
        if let existing = activities[device, default: []].first(where: { $0.stream == stream }) {
            countdown = existing
            if countdown.ended {
                // End is final: the app ignores everything after it. A message numbered above the end went out after it.
                if event != "end" && seq > (countdown.endSeq ?? 0) {
                    afterEnd.append((device, stream, event))
                }
                return
            }
            if seq <= countdown.lastSeq {
                count("android_older_ignored")
                return
            }
        } else {
            countdown = ModelActivity(device: device, stream: stream, generation: 1, shows: planned, openedAt: shownAt, startKey: key)
            countdown.startSentAt = at
            activities[device, default: []].append(countdown)
        }
        countdown.lastSeq = seq
        if event == "end" {
            countdown.ended = true
            countdown.endedReason = data["endedReason"]?.string
            countdown.endSeq = seq
            countdown.endSentAt = at
        } else {
            countdown.shows = planned
            countdown.staleAt = data["staleAt"]?.string.flatMap { Double($0) } ?? countdown.staleAt
        }
    }
}

extension JSONValue {
    /// A JSON number as seconds (integer or fraction); nil for anything else.
    var seconds: Double? {
        switch self {
        case .int(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
}

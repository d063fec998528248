import JSON
import TestSupport

extension DeviceModel {
    /// Replays one accepted message (a line of the fake FCM's record file); returns the iOS activity it opened, if any
    /// (the app then registers its runtime token).
    @discardableResult
    func apply(_ record: JSONValue) -> ModelActivity? {
        let event = record["event"]?.string ?? ""
        let message = record["message"] ?? .null
        let at = record["receivedAt"]?.seconds ?? 0
        switch event {
        case "start", "update", "end":
            return ios(event, record, message["apns"]?["payload"]?["aps"] ?? .null, at)
        case "android_start", "android_update", "android_end":
            android(String(event.dropFirst("android_".count)), record, message["data"] ?? .null, at)
            return nil
        default:
            count("other")
            return nil
        }
    }

    private func ios(_ event: String, _ record: JSONValue, _ aps: JSONValue, _ at: Double) -> ModelActivity? {
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
            return open(device, stream, planned, at, StartKey(stream: stream, token: token))
        }
        guard let activity = byToken[token] else {
            count(event + "_unknown_token")
            return nil
        }
        if activity.ended {
            if event == "update" {
                afterEnd.append((activity.device, activity.stream, event))
            } else {
                count("end_repeated")
            }
            return nil
        }
        if event == "update" {
            activity.shows = planned
            return nil
        }
        activity.ended = true
        activity.endedReason = state["endedReason"]?.string
        if let dismissal = aps["dismissal-date"]?.seconds {
            activity.removed = dismissal <= (aps["timestamp"]?.seconds ?? 0) + 1
        }
        if activity.removed {
            count("ios_dismissed_at_once")
        }
        return nil
    }

    private func open(_ device: String, _ stream: String, _ planned: Int?, _ at: Double, _ key: StartKey) -> ModelActivity {
        let mine = activities[device, default: []].filter { $0.stream == stream }
        starts.append(Start(device: device, stream: stream, receivedAt: at, planned: planned, key: key))
        let generation: Int
        if let last = mine.last, !last.removed, !last.ended {
            duplicates.append(key)
            generation = last.generation
        } else {
            generation = (mine.last?.generation ?? 0) + 1
            if generation > 1 {
                count("ios_new_generation")
            }
        }
        let activity = ModelActivity(device: device, stream: stream, generation: generation, shows: planned, openedAt: at, startKey: key)
        activities[device, default: []].append(activity)
        return activity
    }

    private func android(_ event: String, _ record: JSONValue, _ data: JSONValue, _ at: Double) {
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
            countdown = ModelActivity(device: device, stream: stream, generation: 1, shows: planned, openedAt: at, startKey: key)
            activities[device, default: []].append(countdown)
        }
        countdown.lastSeq = seq
        if event == "end" {
            countdown.ended = true
            countdown.endedReason = data["endedReason"]?.string
            countdown.endSeq = seq
        } else {
            countdown.shows = planned
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

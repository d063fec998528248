import JSON
import TestSupport

extension DeviceModel {
    /// Replays one accepted message of either fake: a fake FCM record line, or a fake APNs one (`kind` `device`: a
    /// token push, replayed as its FCM equivalent; `broadcast`: applied to every activity subscribed to its channel).
    /// A push-to-start carrying `input-push-channel` subscribes the activity it opens to that channel (SPEC 12.5).
    /// Returns the activity a start opened, as `apply` does.
    @discardableResult
    func applyAny(_ record: JSONValue) -> ModelActivity? {
        switch record["kind"]?.string {
        case "broadcast":
            broadcast(channel: record["channelId"]?.string ?? "", aps: record["payload"]?["aps"] ?? .null, at: record["receivedAt"]?.seconds ?? 0)
            return nil
        case "device":
            let payload = record["payload"] ?? .null
            let equivalent: JSONValue = [
                "event": .string(payload["aps"]?["event"]?.string ?? ""), "liveActivityToken": .string(record["token"]?.string ?? ""),
                "receivedAt": .number(record["receivedAt"]?.seconds ?? 0), "message": ["apns": ["payload": payload]],
            ]
            return subscribing(apply(equivalent), aps: payload["aps"] ?? .null)
        default:
            return subscribing(apply(record), aps: record["message"]?["apns"]?["payload"]?["aps"] ?? .null)
        }
    }

    /// Subscribes `activity` to `channel` (a start with `input-push-channel`, or an app that started it locally with
    /// the channel); it applies the channel's stored message if that one is newer than what it shows.
    func subscribe(_ activity: ModelActivity, channel: String, since timestamp: Double = 0) {
        channels.subscribers[channel, default: []].append(activity)
        count("channel_subscribed")
        if let stored = channels.last[channel], (stored["timestamp"]?.seconds ?? 0) > timestamp {
            count("channel_stored_applied")
            receive(stored, on: activity)
        }
    }

    /// One broadcast on `channel`: every subscribed activity applies it as it would a token push (an update after
    /// an activity's end is a change after its end, invariant 5).
    func broadcast(channel: String, aps: JSONValue, at: Double) {
        count("broadcast_" + (aps["event"]?.string ?? "other"))
        channels.last[channel] = aps
        let subscribers = channels.subscribers[channel] ?? []
        if subscribers.isEmpty { count("broadcast_no_subscriber") }
        for activity in subscribers { receive(aps, on: activity) }
    }

    private func subscribing(_ opened: ModelActivity?, aps: JSONValue) -> ModelActivity? {
        if let opened, let channel = aps["input-push-channel"]?.string {
            subscribe(opened, channel: channel, since: aps["timestamp"]?.seconds ?? 0)
        }
        return opened
    }

    private func receive(_ aps: JSONValue, on activity: ModelActivity) {
        let event = aps["event"]?.string ?? ""
        let state = aps["content-state"] ?? .null
        if activity.ended {
            if event == "update" {
                afterEnd.append((activity.device, activity.stream, "channel_update"))
            } else if event == "end" {
                count("channel_end_repeated")
            }
            return
        }
        switch event {
        case "update":
            activity.shows = state["scheduledStartAt"]?.seconds.map { Int($0) }
        case "end":
            activity.ended = true
            activity.endedReason = state["endedReason"]?.string
            if let dismissal = aps["dismissal-date"]?.seconds {
                activity.removed = dismissal <= (aps["timestamp"]?.seconds ?? 0) + 1
            }
        default:
            count("channel_other")
        }
    }
}

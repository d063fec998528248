import JSON
import TestSupport

/// Broadcast channels (SPEC 12.5) in the device model, as APNs treats them:
///
/// - A push-to-start carrying `input-push-channel` opens an activity subscribed to that channel (and without a
///   runtime token: the app registers no session for it).
/// - A broadcast on a channel reaches every activity subscribed to it, on each phone as a token push would: at once
///   on a phone online; held for a phone away and delivered on its return, unless it expired by then
///   (`apns-expiration`, 0: at once) or a newer broadcast on the channel replaced it (`OfflinePhones`).
/// - The channel stores its last broadcast (`message-storage-policy` 1): an activity that subscribes later (its
///   start was held while the phone was away, or was accepted after the broadcast) applies it when its timestamp is
///   not older than the start's, unless it expired before the activity showed.
/// - Token pushes still apply by token.
extension DeviceModel {
    /// Replays one accepted message of either fake as the phone gets it (`receive`): a fake FCM record line, or a
    /// fake APNs one (`kind` `device`: a token push, replayed as its FCM equivalent; `broadcast`: on every activity
    /// subscribed to its channel). Returns the iOS activities opened.
    func receiveAny(_ record: JSONValue) -> [ModelActivity] {
        switch record["kind"]?.string {
        case "broadcast": broadcast(record)
        case "device": receive(Self.tokenPush(record))
        default: receive(record)
        }
    }

    /// Replays one accepted message of either fake on phones online (`apply`); returns the activity a start opened.
    @discardableResult
    func applyAny(_ record: JSONValue) -> ModelActivity? {
        switch record["kind"]?.string {
        case "broadcast": broadcast(record).first
        case "device": apply(Self.tokenPush(record))
        default: apply(record)
        }
    }

    /// A fake APNs token push as the fake FCM's record line of the same push (the model's one shape).
    static func tokenPush(_ record: JSONValue) -> JSONValue {
        let payload = record["payload"] ?? .null
        let headers = (record["headers"]?.object ?? [:]).filter { $0.key != "apns-topic" && $0.key != "apns-push-type" }
        return [
            "event": .string(payload["aps"]?["event"]?.string ?? ""), "liveActivityToken": .string(record["token"]?.string ?? ""),
            "receivedAt": .number(record["receivedAt"]?.seconds ?? 0),
            "message": ["apns": ["headers": .object(headers), "payload": payload]],
        ]
    }

    /// One broadcast the fake APNs accepted: stored as the channel's last, then delivered to each phone with an
    /// activity subscribed to the channel (held while the phone is away). Returns the iOS activities opened by
    /// phones coming back first.
    func broadcast(_ record: JSONValue) -> [ModelActivity] {
        let at = record["receivedAt"]?.seconds ?? 0
        var opened = returns(by: at)
        let channel = record["channelId"]?.string ?? ""
        let payload = record["payload"] ?? .null
        let aps = payload["aps"] ?? .null
        let headers = record["headers"] ?? .null
        count("broadcast_" + (aps["event"]?.string ?? "other"))
        let perPhone: (String) -> JSONValue = { device in
            ["event": "broadcast", "device": .string(device), "channelId": .string(channel), "receivedAt": .number(at),
             "message": ["apns": ["headers": headers, "payload": payload]]]
        }
        channels.last[channel] = ModelChannels.Stored(aps: aps, acceptedAt: at, expiresAt: OfflinePhones.expiry(perPhone(""), ios: true, acceptedAt: at))
        var devices: [String] = []
        for activity in channels.subscribers[channel] ?? [] where !devices.contains(activity.device) {
            devices.append(activity.device)
        }
        if devices.isEmpty { count("broadcast_no_subscriber") }
        for device in devices {
            let copy = perPhone(device)
            if phones.hold(copy, for: device, ios: true, acceptedAt: at) {
                count("held")
            } else if let late = phones.late(copy, for: device, ios: true, acceptedAt: at) {
                opened += deliver(late, to: device)
            } else {
                onChannel(copy, at: at)
            }
        }
        return opened
    }

    /// Subscribes `activity` (showing from `at`, its start's `aps.timestamp` `since`) to `channel`; it applies the
    /// channel's stored message when that one is not older than its start and has not expired by `at`.
    func subscribe(_ activity: ModelActivity, channel: String, since timestamp: Double, at: Double) {
        activity.channel = channel
        channels.subscribers[channel, default: []].append(activity)
        count("channel_subscribed")
        guard let stored = channels.last[channel], (stored.aps["timestamp"]?.seconds ?? 0) >= timestamp else { return }
        let event = stored.aps["event"]?.string ?? ""
        if let expiry = stored.expiresAt, expiry < at {
            count("channel_stored_expired_" + event)
            noteExpired(event, stored.aps, on: activity, at: at)
            return
        }
        count("channel_stored_applied")
        show(event, stored.aps, sentAt: stored.acceptedAt, on: activity, byChannel: true)
    }

    /// A broadcast delivered to one phone (a per-phone line of `broadcast`) at `shownAt`: every activity of that
    /// phone subscribed to the channel applies it.
    func onChannel(_ record: JSONValue, at shownAt: Double) {
        let aps = record["message"]?["apns"]?["payload"]?["aps"] ?? .null
        let at = record["receivedAt"]?.seconds ?? shownAt
        for activity in subscribed(record) {
            show(aps["event"]?.string ?? "", aps, sentAt: at, on: activity, byChannel: true)
        }
    }

    /// A broadcast held for a phone that expired before the phone came back at `at`: what it would have shown is
    /// noted on each subscribed activity of that phone.
    func expiredOnChannel(_ record: JSONValue, at: Double) {
        let aps = record["message"]?["apns"]?["payload"]?["aps"] ?? .null
        for activity in subscribed(record) {
            noteExpired(aps["event"]?.string ?? "", aps, on: activity, at: at)
        }
    }

    /// The activities of a per-phone broadcast line's phone subscribed to its channel.
    private func subscribed(_ record: JSONValue) -> [ModelActivity] {
        let device = record["device"]?.string ?? ""
        let channel = record["channelId"]?.string ?? ""
        return (activities[device] ?? []).filter { $0.channel == channel }
    }

    /// An update or end the channel carried that `activity` never got (expired): the update's planned start may
    /// rightly be missing; the end's moment is judged against the activity's staleness (as an Android end's ttl).
    private func noteExpired(_ event: String, _ aps: JSONValue, on activity: ModelActivity, at: Double) {
        guard !activity.ended else { return }
        if event == "end" {
            activity.endExpiredAt = activity.endExpiredAt ?? at
        } else if let planned = aps["content-state"]?["scheduledStartAt"]?.seconds {
            activity.expiredAway.insert(Int(planned))
        }
    }
}

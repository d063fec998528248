import JSON

/// The push services' store-and-forward for phones offline for a window (the device model's offline phones): a
/// message accepted for a phone while it is away is held, and delivered when the phone comes back, in the order it
/// was accepted, unless it expired or a newer one replaced it first:
///
/// - **iOS (APNs).** A message expires at its `apns-expiration` (epoch seconds; `0`: delivered only to a phone online
///   then; none: kept). APNs keeps the newest message for a destination and discards the one it held before (Apple's
///   "coalescing"); the model applies that per destination (a push-to-start token, an activity's token, a broadcast
///   channel: the channel's newest message for the phone).
///   `apns-collapse-id` only replaces a notification already shown, so it plays no part in what is held.
/// - **Android (FCM).** A message expires `android.ttl` after it was accepted (none: FCM's 4 weeks). A newer message
///   with the same `android.collapse_key` for the same token replaces the held one; messages without one are all
///   kept. `android.notification.tag` only replaces a notification already shown.
///
/// Pure: the model calls it with the record lines' own moments.
struct OfflinePhones {
    /// A phone's time away: [from, until).
    struct Window: Equatable {
        let from: Double
        let until: Double
    }

    /// A message held for a phone that was away when it was accepted.
    struct Held {
        let record: JSONValue
        let acceptedAt: Double
        /// When the push service drops it undelivered; nil: kept.
        let expiresAt: Double?
        /// Held messages with the same key replace each other (the newest is kept); nil: never replaced.
        let replaceKey: String?
    }

    /// What a phone's return delivers, in order, and what it finds dropped for their expiry.
    struct Return {
        let at: Double
        var delivered: [JSONValue] = []
        var expired: [JSONValue] = []
        /// Held messages a newer one replaced.
        var replaced = 0
    }

    private(set) var windows: [String: Window] = [:]
    private var held: [String: [Held]] = [:]
    /// Phones whose window has ended and whose held messages went out.
    private var returned: Set<String> = []

    /// `device` is away over [from, until) (one window per phone).
    mutating func away(_ device: String, from: Double, until: Double) {
        windows[device] = Window(from: from, until: until)
    }

    /// Whether `device` is away at `moment`.
    func isAway(_ device: String, at moment: Double) -> Bool {
        guard let window = windows[device] else { return false }
        return window.from <= moment && moment < window.until
    }

    /// The latest moment a phone comes back (0: none away).
    var lastReturn: Double { windows.values.map(\.until).max() ?? 0 }

    /// Holds `record` (accepted at `acceptedAt`) when `device` was away then and has not come back yet: true when
    /// held. A message accepted during a window the model has already closed (read late) is not held: the caller
    /// delivers it through `late`.
    mutating func hold(_ record: JSONValue, for device: String, ios: Bool, acceptedAt: Double) -> Bool {
        guard isAway(device, at: acceptedAt), !returned.contains(device) else { return false }
        held[device, default: []].append(Held(record: record, acceptedAt: acceptedAt, expiresAt: Self.expiry(record, ios: ios, acceptedAt: acceptedAt),
                                              replaceKey: Self.replaceKey(record, ios: ios)))
        return true
    }

    /// A message accepted while `device` was away but read after its return: delivered now if it has not expired by
    /// the return (nil: not such a message).
    func late(_ record: JSONValue, for device: String, ios: Bool, acceptedAt: Double) -> Return? {
        guard isAway(device, at: acceptedAt), returned.contains(device), let window = windows[device] else { return nil }
        var result = Return(at: window.until)
        if let expiry = Self.expiry(record, ios: ios, acceptedAt: acceptedAt), expiry < window.until {
            result.expired.append(record)
        } else {
            result.delivered.append(record)
        }
        return result
    }

    /// The phones whose window ended by `moment` and have not come back yet, each with what its return delivers.
    mutating func returns(by moment: Double) -> [(device: String, delivery: Return)] {
        let due = windows.filter { $0.value.until <= moment && !returned.contains($0.key) }.keys.sorted()
        return due.map { ($0, comeBack($0)) }
    }

    /// `device` comes back at the end of its window: the held messages, newest per key, the expired ones dropped.
    mutating func comeBack(_ device: String) -> Return {
        guard let window = windows[device], !returned.contains(device) else { return Return(at: 0) }
        returned.insert(device)
        let messages = held.removeValue(forKey: device) ?? []
        var result = Return(at: window.until)
        for (index, message) in messages.enumerated() {
            if let key = message.replaceKey, messages[(index + 1)...].contains(where: { $0.replaceKey == key }) {
                result.replaced += 1
            } else if let expiry = message.expiresAt, expiry < window.until {
                result.expired.append(message.record)
            } else {
                result.delivered.append(message.record)
            }
        }
        return result
    }

    /// When the push service drops `record` undelivered: iOS `apns-expiration` (0: at once), Android acceptance +
    /// `android.ttl` (FCM's default 4 weeks when absent).
    static func expiry(_ record: JSONValue, ios: Bool, acceptedAt: Double) -> Double? {
        let message = record["message"] ?? .null
        if ios {
            guard let expiration = message["apns"]?["headers"]?["apns-expiration"]?.string.flatMap(Double.init) else { return nil }
            return expiration == 0 ? acceptedAt : expiration
        }
        let ttl = message["android"]?["ttl"]?.string.flatMap { Double($0.hasSuffix("s") ? String($0.dropLast()) : $0) }
        return acceptedAt + (ttl ?? 28 * 86_400)
    }

    /// What replaces what while held: iOS per destination (the activity's token, a broadcast's channel, else the FCM
    /// token); Android per token and collapse key, none without a collapse key.
    static func replaceKey(_ record: JSONValue, ios: Bool) -> String? {
        let token = record["token"]?.string ?? ""
        if ios {
            if let channel = record["channelId"]?.string {
                return "channel\u{0}" + channel
            }
            return "apns\u{0}" + (record["liveActivityToken"]?.string ?? token)
        }
        guard let collapseKey = record["message"]?["android"]?["collapse_key"]?.string else { return nil }
        return "fcm\u{0}" + token + "\u{0}" + collapseKey
    }
}

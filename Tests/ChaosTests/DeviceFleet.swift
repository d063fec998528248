import CountdownStore
import Foundation
import JWT
import Postgres

/// The people, devices and streams of one scenario 20 run, what made each device eligible when, and the rows
/// writing them (as the backend would).
final class DeviceFleet {
    /// One phone (or web browser) of a user, with the tokens it has now.
    struct Device {
        let user: String
        let platform: String
        var fcm: String?
        var pushToStart: String?
    }

    /// What kind of device a user has: platform and which token is missing at the start.
    static let kinds = ["ios", "ios", "ios", "android", "android", "ios_no_pts", "ios_no_fcm", "android_no_fcm", "web"]

    let random: ScenarioRandom
    let prefix: String
    /// user → `live_stream` preference on; in the order they were made.
    private(set) var users: [(id: String, on: Bool)] = []
    private var preference: [String: Bool] = [:]
    /// Device ids in the order they were made, and each device.
    private(set) var deviceOrder: [String] = []
    var devices: [String: Device] = [:]
    /// Stream ids in order, and each stream's participants in position order with when they were added (0: at the seed).
    private(set) var streams: [String] = []
    var participants: [String: [(user: String, addedAt: Double)]] = [:]
    /// The planned start (epoch seconds) each stream has as far as the run knows.
    var planned: [String: Int] = [:]
    /// device → moment its last missing token arrived (0: had both from the start).
    var tokenSince: [String: Double] = [:]
    /// Bystanders: users in no stream (some later become late guests).
    private(set) var spare: [String] = []
    /// Whether an iOS device needs an FCM token to get starts (not with `PUSH_TRANSPORT=apns`).
    var iosNeedsFCM = true
    /// device → the iOS version its app reported (`osVersion`; with `APNS_BROADCAST=on`, 18 or later is started on
    /// the stream's channel).
    var osVersion: [String: String] = [:]

    init(random: ScenarioRandom, prefix: String, streams count: Int) {
        self.random = random
        self.prefix = prefix
        var made = 0
        for index in 1...count {
            let stream = "\(prefix)\(index)"
            streams.append(stream)
            participants[stream] = []
            for _ in 0..<(1 + random.int(0, 2)) {
                made += 1
                participants[stream, default: []].append((user("\(prefix)u\(made)"), 0))
            }
        }
        spare = (0..<max(3, count / 3)).map { user("\(prefix)x\($0)") }
    }

    private func user(_ id: String) -> String {
        let on = random.random() > 0.1
        users.append((id, on))
        preference[id] = on
        for index in 0..<(1 + (random.random() < 0.4 ? 1 : 0)) {
            let kind = random.choice(Self.kinds)
            let device = "\(id)d\(index)"
            let platform = kind == "web" ? "web" : String(kind.prefix { $0 != "_" })
            let fcm = kind.hasSuffix("no_fcm") ? nil : "fcm-" + Self.token("fcm", device)
            let pushToStart = platform == "ios" && kind != "ios_no_pts" ? Self.token("pts", device) : nil
            deviceOrder.append(device)
            devices[device] = Device(user: id, platform: platform, fcm: fcm, pushToStart: pushToStart)
            tokenSince[device] = 0
        }
        return id
    }

    /// A token made of its parts: 32 hex digits, the same for the same parts.
    static func token(_ parts: String...) -> String {
        let digest = (try? HMACSHA256.mac(key: Array("device-fleet".utf8), message: Array(parts.joined(separator: "-").utf8))) ?? []
        return digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// Gives every iOS device a reported iOS version: 18 or later with probability `newer`, else 16 or 17 (drawn in
    /// device order, after the fleet's own draws).
    func reportOSVersions(newer: Double) {
        for id in deviceOrder where devices[id]?.platform == "ios" {
            osVersion[id] = random.random() < newer ? "\(random.int(18, 19)).\(random.int(0, 4))" : "\(random.int(16, 17)).\(random.int(0, 7))"
        }
    }

    /// Whether the device reported iOS 18 or later (its starts go on the stream's channel when it has one).
    func onIOS18(_ device: String) -> Bool {
        osVersion[device].flatMap { Int($0.prefix { $0 != "." }) }.map { $0 >= 18 } ?? false
    }

    /// Writes the users, preferences, devices (with their reported iOS versions), streams and participants in one
    /// transaction (the devices' outbox rows are dropped: every device is new, nothing to backfill), each stream
    /// planned at `plannedAt[stream]`.
    func seed(_ db: PostgresClient, plannedAt: [String: Int]) async throws {
        for stream in streams {
            planned[stream] = plannedAt[stream]
        }
        let users = users
        let versions = osVersion
        let devices = deviceOrder.map { (id: $0, device: self.devices[$0]!) }
        let streams = streams.map { (id: $0, planned: Double(plannedAt[$0] ?? 0), people: participants[$0, default: []].map(\.user)) }
        try await db.transaction { connection in
            for (user, on) in users {
                try connection.execute("INSERT INTO users (id, display_name, locale) VALUES ($1, $2, 'tr')", [user, "User " + user])
                if !on {
                    try connection.execute("INSERT INTO notification_preferences (user_id, category, enabled) VALUES ($1, 'live_stream', false)", [user])
                }
            }
            for (id, device) in devices {
                try connection.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES ($1, $2, $3, $4, $5)
                    """, [id, device.user, device.platform, device.fcm, device.pushToStart])
            }
            for (device, version) in versions.sorted(by: { $0.key < $1.key }) {
                try BroadcastChannels.recordOSVersion(device: device, version: version, major: Int(version.prefix { $0 != "." }) ?? 0, on: connection)
            }
            try connection.execute("DELETE FROM countdown_outbox WHERE topic = 'device'")
            for stream in streams {
                try connection.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, $2, to_timestamp($3))",
                                       [stream.id, "Yayın " + stream.id, stream.planned])
                for (position, user) in stream.people.enumerated() {
                    try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, $3, $4)",
                                           [stream.id, user, position == 0 ? "creator" : "guest", position])
                }
            }
        }
    }

    /// Whether the device can get starts at all now: its user's preference on, an FCM token (not for iOS when
    /// `iosNeedsFCM` is off), and on iOS a push-to-start token (web never).
    func isEligible(_ device: String) -> Bool {
        guard let found = devices[device], preference[found.user] == true else { return false }
        switch found.platform {
        case "ios": return found.pushToStart != nil && (found.fcm != nil || !iosNeedsFCM)
        case "android": return found.fcm != nil
        default: return false
        }
    }

    /// The earliest moment `device` could get a start of `stream`; nil when it never could.
    func eligibleSince(_ device: String, _ stream: String) -> Double? {
        guard let found = devices[device], isEligible(device),
              let added = participants[stream]?.first(where: { $0.user == found.user })?.addedAt else { return nil }
        return max(added, tokenSince[device] ?? 0)
    }
}

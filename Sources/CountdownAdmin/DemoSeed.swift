import CountdownDomain
import CountdownStore
import Foundation
import Postgres

/// The demo's data: a creator and guests with several devices, a stream whose T-60 falls a few seconds from now,
/// one already inside its hour, and one whose reminder is due shortly. Replaces earlier demo rows.
public enum DemoSeed {
    public struct Summary: Sendable, Codable {
        public var streams: [String: Date]
        public var users: Int
        public var devices: Int
        public var reminders: Int
    }

    /// - Parameter secondsUntilT60: how soon the first stream's start window opens.
    public static func seed(_ database: PostgresClient, settings: FlowSettings, secondsUntilT60: Int = 8) async throws -> Summary {
        let lead = settings.startLeadSeconds
        let reminderLead = settings.reminderLeadSeconds
        return try await database.transaction { connection in
            try DemoSeedQueries.deleteDemoRows(on: connection)
            let users: [(String, String, String)] = [
                ("demo-selin", "Selin Kaya", "tr"), ("demo-mert", "Mert Demir", "en"), ("demo-ayse", "Ayşe Yılmaz", "tr"),
                ("demo-can", "Can Öztürk", "tr"), ("demo-deniz", "Deniz Arslan", "tr"),
            ]
            for (id, name, locale) in users {
                try DemoSeedQueries.insertUser(id, name: name, locale: locale, on: connection)
            }
            try DemoSeedQueries.disableLiveStream(user: "demo-ayse", on: connection)
            // (device, user, platform, has FCM token, has push-to-start token, locale)
            let devices: [(String, String, String, Bool, Bool, String?)] = [
                ("demo-selin-iphone", "demo-selin", "ios", true, true, nil),
                ("demo-mert-iphone", "demo-mert", "ios", true, true, "en"),
                ("demo-mert-ipad", "demo-mert", "ios", true, false, "en"),
                ("demo-mert-pixel", "demo-mert", "android", true, false, "en"),
                ("demo-ayse-iphone", "demo-ayse", "ios", true, true, nil),
                ("demo-can-iphone", "demo-can", "ios", true, true, nil),
                ("demo-deniz-iphone", "demo-deniz", "ios", true, true, nil),
            ]
            for (device, user, platform, hasFCM, hasPushToStart, locale) in devices {
                try DemoSeedQueries.insertDevice(device, user: user, platform: platform, fcmToken: hasFCM ? demoToken("fcm", device) : nil,
                                               pushToStartToken: hasPushToStart ? demoToken("pts", device) : nil,
                                               timezone: "Europe/Istanbul", locale: locale, on: connection)
            }
            let streams: [(String, String, Int)] = [
                ("demo-t60", "Akşam Sohbeti: Yeni Albüm", lead + secondsUntilT60),
                ("demo-inside", "Sabah Kahvesi", max(lead / 2, reminderLead + 60)),
                ("demo-reminder", "Gece Yayını", reminderLead + secondsUntilT60 + 4),
            ]
            var planned: [String: Date] = [:]
            for (id, title, seconds) in streams {
                planned[id] = try DemoSeedQueries.insertStream(id, title: title, startsIn: seconds, on: connection)
            }
            let participants: [(String, String, String, Int)] = [
                ("demo-t60", "demo-selin", "creator", 0), ("demo-t60", "demo-mert", "guest", 1), ("demo-t60", "demo-ayse", "guest", 2),
                ("demo-inside", "demo-mert", "creator", 0), ("demo-inside", "demo-can", "guest", 1),
                ("demo-reminder", "demo-can", "creator", 0),
            ]
            for (stream, user, role, position) in participants {
                try DemoSeedQueries.insertParticipant(stream: stream, user: user, role: role, position: position, on: connection)
            }
            for user in ["demo-selin", "demo-ayse", "demo-deniz"] {
                try DemoSeedQueries.insertReminder(stream: "demo-reminder", user: user, on: connection)
            }
            return Summary(streams: planned, users: users.count, devices: devices.count, reminders: 3)
        }
    }

    /// A stable fake token (hex) for a demo device.
    public static func demoToken(_ kind: String, _ device: String) -> String {
        var hash: UInt64 = kind == "fcm" ? 0xcbf2_9ce4_8422_2325 : 0x8422_2325_cbf2_9ce4
        var hex = ""
        for round in 0..<4 {
            for byte in (device + String(round)).utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
            hex += String(format: "%016llx", hash)
        }
        return hex
    }
}

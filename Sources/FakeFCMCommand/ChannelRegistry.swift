import Foundation
import Synchronization

/// The fake APNs' broadcast channels: created, read, listed and deleted through the channel management endpoints,
/// at most `limit` alive at once (Apple's `CannotCreateChannelConfig`).
final class ChannelRegistry: Sendable {
    /// One channel as `GET /fake/channels` shows it.
    struct Channel: Encodable, Sendable {
        let id: String
        let bundleID: String
        let messageStoragePolicy: Int
        /// Epoch seconds.
        let createdAt: Double
        /// Broadcasts accepted on it.
        var broadcasts = 0
    }

    let limit: Int
    private let channels = Mutex<[String: Channel]>([:])
    private let now: @Sendable () -> Date

    init(limit: Int, now: @escaping @Sendable () -> Date) {
        self.limit = limit
        self.now = now
    }

    /// The new channel; nil when `limit` channels of the app are alive.
    func create(bundleID: String, messageStoragePolicy: Int) -> Channel? {
        let id = Self.newID()
        let time = now().timeIntervalSince1970
        return channels.withLock { channels in
            guard channels.values.filter({ $0.bundleID == bundleID }).count < limit else { return nil }
            let channel = Channel(id: id, bundleID: bundleID, messageStoragePolicy: messageStoragePolicy, createdAt: time)
            channels[id] = channel
            return channel
        }
    }

    func channel(_ id: String, bundleID: String) -> Channel? {
        channels.withLock { $0[id] }.flatMap { $0.bundleID == bundleID ? $0 : nil }
    }

    /// Whether it existed.
    func delete(_ id: String, bundleID: String) -> Bool {
        channels.withLock { channels in
            guard channels[id]?.bundleID == bundleID else { return false }
            channels[id] = nil
            return true
        }
    }

    /// Counts a broadcast on the channel; false when it does not exist.
    func countBroadcast(_ id: String, bundleID: String) -> Bool {
        channels.withLock { channels in
            guard channels[id]?.bundleID == bundleID else { return false }
            channels[id]?.broadcasts += 1
            return true
        }
    }

    /// Every channel, oldest first.
    func all(bundleID: String? = nil) -> [Channel] {
        channels.withLock { Array($0.values) }.filter { bundleID == nil || $0.bundleID == bundleID }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Forgets every channel (`DELETE /fake/channels`).
    func reset() { channels.withLock { $0 = [:] } }

    /// A channel id as Apple writes them: base64 of 16 random bytes.
    static func newID() -> String {
        Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    /// A well-formed channel id: base64 of 8 to 64 bytes.
    static func isWellFormed(_ id: String) -> Bool {
        guard let bytes = Data(base64Encoded: id) else { return false }
        return (8...64).contains(bytes.count)
    }
}

import CountdownStore

extension PostgresAPIStore {
    public func recordOSVersion(deviceID: String, version: String, major: Int) async throws {
        try await run {
            try await database.withConnection { try BroadcastChannels.recordOSVersion(device: deviceID, version: version, major: major, on: $0) }
        }
    }

    public func liveActivityChannel(streamID: String) async throws -> String? {
        try await run { try await database.withConnection { try BroadcastChannels.usable(stream: streamID, on: $0)?.channelID } }
    }
}

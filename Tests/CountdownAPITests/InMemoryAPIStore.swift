import CountdownAPI
import CountdownCommands
import CountdownStore
import Synchronization

/// An `APIStore` over dictionaries with the same outcomes as the PostgreSQL one, for tests of the HTTP layer.
final class InMemoryAPIStore: APIStore {
    struct Device: Equatable {
        var userID: String?
        var platform: String
        var fcmToken: String?
        var pushToStartToken: String?
        var timezone: String?
        var locale: String?
    }

    struct Session: Equatable {
        var userID: String
        var token: String
        var activityID: String?
    }

    struct Stream: Equatable {
        var status: String
        var creator: String?
    }

    struct State {
        var users: Set<String> = []
        var devices: [String: Device] = [:]
        var streams: [String: Stream] = [:]
        var sessions: [[String]: Session] = [:]
        var reachable = true
        /// iOS versions recorded, by device.
        var osVersions: [String: String] = [:]
        /// Broadcast channel ids, by stream.
        var channels: [String: String] = [:]
    }

    let state = Mutex(State())

    func registerDevice(_ registration: DeviceRegistration, userID: String?) async throws -> DeviceUpsertOutcome {
        try state.withLock { state in
            if let userID, !state.users.contains(userID) { throw APIError(.unknownUser, "unknown user") }
            let existing = state.devices[registration.deviceID]
            if registration.isPushToStartUpdate && existing == nil { throw APIError(.deviceNotFound, "unknown device") }
            if userID == nil, existing?.userID != nil { return .refused }
            var outcome = DeviceUpsertOutcome.written
            if let userID, let previous = existing?.userID, previous != userID {
                let retired = state.sessions.filter { $0.key[1] == registration.deviceID && $0.value.userID != userID }.map(\.key)
                for key in retired { state.sessions[key] = nil }
                outcome = .takenOver(previousUser: previous, sessionsEnded: retired.count)
            }
            // A takeover keeps nothing the request did not send.
            let kept = outcome == .written ? existing : nil
            var device = existing ?? Device(platform: registration.platform)
            device.fcmToken = registration.isPushToStartUpdate ? kept?.fcmToken : registration.fcmToken
            device.platform = registration.platform
            device.userID = userID ?? existing?.userID
            device.pushToStartToken = registration.platform == "ios" ? registration.pushToStartToken ?? kept?.pushToStartToken : nil
            device.timezone = registration.timezone ?? kept?.timezone
            device.locale = registration.locale ?? kept?.locale
            state.devices[registration.deviceID] = device
            return outcome
        }
    }

    func registerSession(_ session: SessionRegistration, userID: String) async throws {
        try state.withLock { state in
            guard state.streams[session.streamID] != nil else { throw APIError(.streamNotFound, "unknown stream") }
            guard let device = state.devices[session.deviceID], device.userID == userID else { throw APIError(.deviceNotFound, "not yours") }
            state.sessions[[session.streamID, session.deviceID]] = Session(userID: userID, token: session.liveActivityToken, activityID: session.activityID)
        }
    }

    func removeSession(streamID: String, deviceID: String, activityID: String?, userID: String) async throws {
        try state.withLock { state in
            guard state.devices[deviceID]?.userID == userID else { throw APIError(.deviceNotFound, "not yours") }
            guard activityID == nil || state.sessions[[streamID, deviceID]]?.activityID == activityID else { return }
            state.sessions[[streamID, deviceID]] = nil
        }
    }

    func cancelStream(id: String, caller: Caller) async throws -> StreamCommands.CancelReport {
        try state.withLock { state in
            guard state.users.contains(caller.userID) else { throw APIError(.unknownUser, "unknown user") }
            guard let stream = state.streams[id] else { throw APIError(.streamNotFound, "unknown stream") }
            guard caller.isAdmin || stream.creator == caller.userID else { throw APIError(.forbidden, "not the creator") }
            guard stream.status == "scheduled" else { throw APIError(.streamAlreadyEnded, "already \(stream.status)") }
            state.streams[id]?.status = "cancelled"
            return StreamCommands.CancelReport(remindersCancelled: 0, sessionsToEnd: state.sessions.keys.filter { $0[0] == id }.count)
        }
    }

    func recordOSVersion(deviceID: String, version: String, major: Int) async throws {
        state.withLock { $0.osVersions[deviceID] = version }
    }

    func liveActivityChannel(streamID: String) async throws -> String? {
        state.withLock { $0.channels[streamID] }
    }

    func ping() async throws {
        guard state.withLock({ $0.reachable }) else { throw APIError(.unavailable, "unreachable") }
    }
}

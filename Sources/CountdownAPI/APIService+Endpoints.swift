import CountdownStore
import HTTPServer

extension APIService {
    /// `POST /notifications/device-token`: auth optional; with auth the device is linked to the caller.
    func registerDevice(_ request: HTTPRequest) async throws -> HTTPResponse {
        let caller = try authenticator.caller(of: request)
        if let caller { try limitUser(caller) } else { try limitAnonymous() }
        let registration = try DeviceRegistration(body: try JSONBody(request))
        switch try await store.registerDevice(registration, userID: caller?.userID) {
        case .written:
            break
        case .refused:
            metrics.refusedDeviceWrites.increment()
            throw APIError(.unauthorized, "device \(registration.deviceID) is linked to a user; register it with that user's bearer token")
        case .takenOver(let previous, let sessions):
            metrics.takeovers.increment()
            metrics.takeoverSessionsEnded.increment(by: UInt64(max(0, sessions)))
            logger.info("device taken over", [
                "device": .string(registration.deviceID), "from": .string(previous), "to": .string(caller?.userID ?? ""),
                "sessionsEnded": .int(sessions),
            ])
        }
        if let os = registration.osVersion {
            try await store.recordOSVersion(deviceID: registration.deviceID, version: os.version, major: os.major)
        }
        return Self.success
    }

    /// `POST /notifications/live-activity-sessions`: auth required; the device must be the caller's.
    func registerSession(_ request: HTTPRequest) async throws -> HTTPResponse {
        let caller = try authenticator.requireCaller(of: request)
        try limitUser(caller)
        let session = try SessionRegistration(body: try JSONBody(request))
        try await store.registerSession(session, userID: caller.userID)
        return Self.success
    }

    /// `DELETE /notifications/live-activity-sessions/:streamId/:deviceId[?activityId=X]`: auth required, the
    /// device's owner only; with `activityId`, that activity's session only, else every activity of the device for
    /// the stream; `204` also when there was nothing to delete.
    func removeSession(_ request: HTTPRequest, streamID: String, deviceID: String) async throws -> HTTPResponse {
        let caller = try authenticator.requireCaller(of: request)
        try limitUser(caller)
        let stream = try FieldRules.identifier(streamID, field: "streamId")
        let device = try FieldRules.identifier(deviceID, field: "deviceId")
        let activity = try request.query.first { $0.name == "activityId" }.map { (item) throws(APIError) in
            try FieldRules.identifier(item.value ?? "", field: "activityId")
        }
        try await store.removeSession(streamID: stream, deviceID: device, activityID: activity, userID: caller.userID)
        return .empty(status: 204)
    }

    /// `POST /live-stream/:id/cancel`: auth required, the stream's creator or an admin. Any body is ignored.
    func cancelStream(_ request: HTTPRequest, streamID: String) async throws -> HTTPResponse {
        let caller = try authenticator.requireCaller(of: request)
        try limitUser(caller)
        let stream = try FieldRules.identifier(streamID, field: "id")
        let report = try await store.cancelStream(id: stream, caller: caller)
        logger.info("stream cancelled", [
            "stream": .string(stream), "by": .string(caller.userID), "admin": .bool(caller.isAdmin),
            "remindersCancelled": .int(report.remindersCancelled), "sessionsToEnd": .int(report.sessionsToEnd),
        ])
        return Self.success
    }

    /// `GET /readyz`: 200 when PostgreSQL answers, 503 otherwise or while shutting down. The body never says
    /// why (no host, port or server message on the public port); the log does.
    func readiness() async throws -> HTTPResponse {
        if isDraining {
            logger.info("not ready: shutting down")
            throw Self.notReady
        }
        do {
            try await store.ping()
        } catch {
            logger.error("not ready: PostgreSQL does not answer", ["error": .string("\(error)")])
            throw Self.notReady
        }
        return .json(["status": "ready"])
    }

    static let notReady = APIError(.unavailable, "not ready")
}

extension APIService {
    /// `GET /live-stream/:id/live-activity-channel`: auth required. The stream's broadcast channel id (SPEC 12.5), so an
    /// app that starts an activity locally subscribes with `pushType: .channel(id)`; 404 when broadcast channels are off
    /// or the stream has none (then the app starts with `pushType: .token`).
    func liveActivityChannel(_ request: HTTPRequest, streamID: String) async throws -> HTTPResponse {
        _ = try authenticator.requireCaller(of: request)
        let stream = try FieldRules.identifier(streamID, field: "id")
        guard policy.broadcastChannels else { throw APIError(.notFound, "broadcast channels are off (APNS_BROADCAST)") }
        guard let channel = try await store.liveActivityChannel(streamID: stream) else {
            throw APIError(.notFound, "stream \(stream) has no broadcast channel; start the activity with pushType .token")
        }
        return .json(["streamId": stream, "channelId": channel])
    }
}

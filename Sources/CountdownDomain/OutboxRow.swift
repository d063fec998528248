import Foundation

/// One change recorded by a trigger.
public struct OutboxRow: Sendable, Equatable {
    public enum Topic: String, Sendable { case stream, participant, device, user, session, reminder, retired }
    public var id: Int64
    public var topic: Topic
    public var streamID: String?
    public var userID: String?
    public var deviceID: String?
    public var rescheduled: Bool
    public var createdAt: Date

    public init(id: Int64, topic: Topic, streamID: String?, userID: String?, deviceID: String?, rescheduled: Bool, createdAt: Date) {
        self.id = id
        self.topic = topic
        self.streamID = streamID
        self.userID = userID
        self.deviceID = deviceID
        self.rescheduled = rescheduled
        self.createdAt = createdAt
    }
}

extension OutboxRow {
    /// The queue operations this change implies, given the current state of its stream.
    public func plan(with planner: JobPlanner, states: [String: StreamState], now: Date) -> [QueueOperation] {
        switch topic {
        case .stream:
            guard let stream = streamID.flatMap({ states[$0] }) else { return [] }
            return planner.planStream(stream, now: now, rescheduled: rescheduled)
        case .participant:
            guard let stream = streamID.flatMap({ states[$0] }), let userID else { return [] }
            return planner.planParticipant(stream: stream, user: userID, now: now)
        case .device:
            guard let deviceID else { return [] }
            return planner.planDevice(deviceID, now: now)
        case .user:
            guard let userID else { return [] }
            return planner.planUser(userID, now: now)
        case .session:
            guard let stream = streamID.flatMap({ states[$0] }), let deviceID else { return [] }
            return planner.planSession(stream: stream, device: deviceID, now: now)
        case .reminder:
            guard let stream = streamID.flatMap({ states[$0] }) else { return [] }
            return planner.planReminder(stream: stream, now: now)
        case .retired:
            guard let streamID, let deviceID else { return [] }
            return planner.planRetired(stream: streamID, device: deviceID, now: now)
        }
    }
}

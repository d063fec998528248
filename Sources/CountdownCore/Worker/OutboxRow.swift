import Foundation

/// One change recorded by a trigger.
struct OutboxRow: Sendable, Equatable {
    enum Topic: String, Sendable { case stream, participant, device, user, session, reminder }
    var id: Int64
    var topic: Topic
    var streamID: String?
    var userID: String?
    var deviceID: String?
    var rescheduled: Bool
    var createdAt: Date
}

extension OutboxRow {
    /// The queue operations this change implies, given the current state of its stream.
    func plan(with planner: JobPlanner, states: [String: StreamState], now: Date) -> [QueueOperation] {
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
        }
    }
}

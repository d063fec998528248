import Foundation
import Testing
import TestSupport

/// `PUSH_TRANSPORT=apns` end to end: a real worker pushes straight to the fake APNs over HTTP/2 and TLS (nghttpx in
/// front, trusted through `APNS_CA_FILE`) with an ES256 provider token: a push-to-start, an update, an end.
@Suite(.serialized) struct APNsTokenFlowTests {
    @Test func aStreamStartsUpdatesAndEndsThroughAPNs() async throws {
        let apns = try await FakeAPNsProcess()
        let system = try await CountdownSystem(settings: apns.workerEnvironment.merging(["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"]) { $1 })
        try await system.user("creator", name: "Selin Kaya")
        try await system.device("creator-iphone", user: "creator")
        try system.startWorker()
        try await system.stream("s1", title: "Gece", startsIn: 20, creator: "creator")

        let startToken = CountdownSystem.pushToStartToken("creator-iphone")
        let started = try await apns.waitForPushes("the push-to-start") { $0.contains { $0.event == "start" } }
        let start = try #require(started.first { $0.event == "start" })
        #expect(start.kind == "device" && start.token == startToken)
        #expect(start.headers["apns-push-type"] == "liveactivity")
        #expect(start.headers["apns-topic"] == "\(apns.bundleID).push-type.liveactivity")
        #expect((start.aps["attributes"] as? [String: Any])?["streamId"] as? String == "s1")
        let planned = try await system.plannedStart("s1")
        #expect(start.contentState["scheduledStartAt"] as? Int == Int(planned.timeIntervalSince1970.rounded(.down)))

        try await system.session(stream: "s1", device: "creator-iphone", user: "creator")
        let activity = CountdownSystem.sessionToken("s1", "creator-iphone")
        try await system.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '1 hour' WHERE id = 's1'")
        let moved = try await system.plannedStart("s1")
        let updated = try await apns.waitForPushes("the update") { $0.contains { $0.event == "update" } }
        let update = try #require(updated.first { $0.event == "update" })
        #expect(update.token == activity)
        #expect(update.contentState["scheduledStartAt"] as? Int == Int(moved.timeIntervalSince1970))

        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        let ended = try await apns.waitForPushes("the end") { $0.contains { $0.event == "end" } }
        let end = try #require(ended.first { $0.event == "end" })
        #expect(end.token == activity)
        #expect(end.contentState["endedReason"] as? String == "cancelled")
        #expect(end.headers["apns-priority"] == "10")

        // Every request carried the worker's provider token, and each was answered 200.
        let requests = try await apns.control.requests(kind: "device")
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.status == 200 && $0.headers["authorization"]?.hasPrefix("bearer ") == true })
        #expect(Set(requests.compactMap { $0.headers["authorization"] }).count == 1, "one provider token for the fleet")
        #expect(try await system.pushes().isEmpty, "nothing went to the fake FCM")
        await system.stop()
        apns.stop()
    }
}

import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
import Testing
import TestSupport

/// REMINDER_TRANSPORT=off: no reminder job is planned or sent, and the reconciler does not queue one every
/// interval for the reminders that stay active.
@Suite(.serialized) struct ReminderTransportOffTests {
    @Test func remindersOffAreNeitherPlannedNorSent() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "2", "REMINDER_LEAD_SECONDS": "6", "REMINDER_TRANSPORT": "off"])
        for user in ["creator", "fan"] { try await system.user(user) }
        try await system.device("creator-iphone", user: "creator")
        try await system.device("fan-phone", user: "fan", platform: "android", pushToStart: false)
        try system.startWorker()
        try await system.stream("s1", startsIn: 7, creator: "creator")
        try await system.execute("INSERT INTO stream_reminders (stream_id, user_id) VALUES ('s1', 'fan')")
        try await system.waitForPushes("the creator's start") { $0.events("start").count == 1 }
        let dry = try await system.admin(["reconcile", "--dry-run", "--json"])
        #expect(!dry.output.contains("\"reminder\" : 1"), "the reconciler does not want the reminder again: \(dry.output)")
        #expect(try await system.pushes().events("notification").isEmpty)
        await system.stop()
    }
}

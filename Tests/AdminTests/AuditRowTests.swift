@testable import CountdownAdmin
import CountdownStore
import Foundation
import Postgres
import Testing

/// countdown-admin's actions write `countdown_audit` rows (SPEC 11): actor `--actor`, else the operating-system
/// user; reading commands write none.
@Suite struct AuditRowTests {
    func rows(_ fixture: AdminFixture) async throws -> [(actor: String, action: String, target: String, reason: String, outcome: String)] {
        try await fixture.query("SELECT actor, action, target, reason, outcome FROM countdown_audit ORDER BY id").map {
            (try $0.decode("actor"), try $0.decode("action"), try $0.decode("target"), try $0.decode("reason"), try $0.decode("outcome"))
        }
    }

    @Test func actionsAreAuditedWithTheActor() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("s1", startsIn: 1800, people: ["selin"])
            #expect(try await fixture.admin("cancel", "s1", "--yes", "--actor", "ada").status == 0)
            #expect(try await fixture.admin("pause", "--kind", "start", "--reason", "APNs incident", "--yes", "--actor=ada").status == 0)
            #expect(try await fixture.admin("show", "s1").status == 0)
            let audit = try await rows(fixture)
            #expect(audit.count == 2)
            #expect(audit.first.map { [$0.actor, $0.action, $0.target, $0.outcome] } == ["ada", "stream.cancel", "s1", "done"])
            #expect(audit.last.map { [$0.actor, $0.action, $0.target, $0.reason, $0.outcome] } == ["ada", "pause", "start", "APNs incident", "done"])
        }
    }

    @Test func refusedActionsAreAuditedAsTheSystemUser() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("s1", startsIn: 1800, people: ["selin"])
            let run = try await fixture.admin("cancel", "s1")
            #expect(run.status == 2)
            let audit = try await rows(fixture)
            #expect(audit.count == 1)
            #expect(audit.first?.actor == AdminAuditUser.name)
            #expect(audit.first?.outcome.hasPrefix("refused") == true)
            #expect(try await fixture.status(of: "s1") == "scheduled")
        }
    }
}

/// The user the tests run as, as countdown-admin names it.
enum AdminAuditUser {
    static var name: String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? ""
    }
}
